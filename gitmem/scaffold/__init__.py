"""Starting an agent: `init` from the template, and the offline `demo`."""
