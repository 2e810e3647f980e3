// The library as one module: the layer targets, each importing only the ones below it
// (docs/decisions/library-targets.md). Code outside the library keeps `import MapGate`.
@_exported import MapGateBase
@_exported import MapGateStorage
@_exported import MapGateTrust
@_exported import MapGateWorkflows
@_exported import MapGateServer
