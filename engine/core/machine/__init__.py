"""How the engine uses the machine: one set of BLAS kernels on every x86-64 CPU, asked for before
numpy loads (`kernels`), one BLAS thread for small products (`threads`), memory checked before
an array sized by the data is made (`memory`), units of work on worker processes (`workers`).

May import engine.core's other modules only.
"""
