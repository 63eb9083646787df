"""The bottom layer: typed errors, progress events and the cancel token, atomic file writing and
the user folders parm keeps its cache, decisions and logs in.

Owns nothing of the method. Imports only the standard library (and platformdirs, lazily);
every other package of the engine may import it.
"""
