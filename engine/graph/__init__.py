"""Graph: the cosine-similarity graph, the only O(N^2) step. The neighbour search finds every
response's Kmax nearest neighbours once; `NeighbourGraph` gives cheap views for any K <= Kmax
and power p (features T_i(c), S_i); late interaction re-scores candidates with MaxSim.

May import engine.embedding, engine.input and engine.core.
"""
