"""The session model (docs/explanation/session-model.md): one pseudo-likelihood over every read of
every item of a scale group, items and raters as random effects, fitted by empirical Bayes. Its
data and features (`features`), parameters and derivatives (`design`), the block-arrow Hessian
(`blocks`), the mode and the variances (`fit`), standard errors (`inference`), K and
cross-fitting (`cross_fit`), what parm reads of it (`summary`) and its figures in a run
(`figures.session_model_figures`, `SessionModelFigures`).

May import engine.model's per-item modules (metrics, pseudo_likelihood), engine.graph,
engine.input and engine.core; engine.model's per-item modules never import it.
"""
