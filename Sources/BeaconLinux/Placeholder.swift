// The OS layer: filled in by the run/watchdog work.
