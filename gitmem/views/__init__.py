"""Read-only views of memory for people: `status` and `pending`."""
