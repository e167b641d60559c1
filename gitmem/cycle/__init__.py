"""How a cycle runs: preflight and lock, the reading budget, the agent, postflight, salvage."""
