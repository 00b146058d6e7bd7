"""Benchmarks (`make bench`, `python -m bench`) and the sandbox hosts they and the tests run
on: real sshd servers on loopback addresses or in network namespaces.  Not shipped: nothing
in app/, widgets/ or topology/ imports it."""
