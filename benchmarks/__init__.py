"""asv suites of s3vm-bench (see ``asv.conf.json`` and the README section "Benchmarks (asv)")."""
