"""asv benchmark suites (time_*, peakmem_*, track_*); see asv.conf.json."""
