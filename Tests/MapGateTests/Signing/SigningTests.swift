import Testing

/// Groups the tests of `Sources/MapGate/Signing` so `swift test --filter Signing` selects them all.
@Suite enum SigningTests {}
