"""Model: the PARM pseudo-likelihood (objective, gradient, Hessian, fit, standard errors), the
agreement metrics, tuning K and p (grid or Brent), cross-fitting the whole procedure, the
severity's classifiers and lexical features; the session model, one fit over every read of
every item, in `session`.

May import engine.graph, engine.embedding, engine.input and engine.core. The per-item modules
never import `session`.
"""
