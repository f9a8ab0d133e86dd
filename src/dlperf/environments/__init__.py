"""Framework environments: the requirements dlperf builds, and the ones a site provides."""
