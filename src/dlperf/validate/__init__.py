"""Cross-validation: splitting protocols and error metrics."""
