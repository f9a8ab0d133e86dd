"""One study's directory: its files, outputs and retiring, superseded and disturbed
records, archive, RO-Crate."""
