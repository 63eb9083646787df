"""Model: the PARM pseudo-likelihood (objective, gradient, Hessian, fit, standard errors), the
agreement metrics, tuning K and p (grid or Brent), and cross-fitting the whole procedure.

May import engine.graph, engine.embedding, engine.input and engine.core.
"""
