"""Live metrics: collectors that turn tool output into samples, ring-buffered series for the
dashboard, and the per-run results (average, 95th percentile, pass/fail, median of runs)."""
