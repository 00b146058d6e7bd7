"""The as-built check's reading side: the read-only probes per platform, their parsers, the
gathering over the run's transports, the job the CLI and the Run tab share, and its record."""
