"""Core, the bottom layer: typed errors, progress events and the cancel token, atomic file
writing (and the true cause of a failed write), holding Ctrl+C and SIGTERM during a switch,
exchanging two folders in one step, and the user folders for the cache, decisions and logs.

Owns nothing of the method. Imports only the standard library (platformdirs lazily); every
other package of the engine may import it.
"""
