"""The common protocol, experiment specs, the grid runner, the results store and the CLI."""
