"""Study against study (`dlperf compare`): statistics, a pair of studies, candidate against
model, trend, rendering."""
