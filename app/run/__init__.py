"""Running the methodology on real hosts: the plan (which step runs where, in which order),
the crash-safe journal, and the engine that executes it over the remote transports.
Qt-free: the command line and the GUI's worker thread drive the same engine."""
