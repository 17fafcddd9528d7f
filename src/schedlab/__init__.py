"""schedlab: a trace-driven simulator for cluster resource scheduling research."""
__version__ = "0.1.0"
