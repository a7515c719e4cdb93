"""flux-conformance's reference implementation of the formats the suite covers.

One module per format (``idset``, ``hostlist``, ``ranges`` ...); each may be used on its own
as a library.  :mod:`reference.operations` maps the suite's operation names onto them.
"""

__version__ = "0.8.0"
