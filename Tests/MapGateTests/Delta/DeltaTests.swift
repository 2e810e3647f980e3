import Testing

/// The delta suites, grouped so that `swift test --filter Delta` runs all of them.
@Suite enum DeltaTests {}
