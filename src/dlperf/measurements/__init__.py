"""What was measured: run records, the timings table and its points, the external CSV
format."""
