"""The discrete-event engine: :class:`~schedlab.engine.simulation.Simulation` (the loop),
:class:`~schedlab.engine.state.ClusterState`, the action applier and the run's
:class:`~schedlab.engine.records.RunRecords`. See ``docs/background/design.md``."""
