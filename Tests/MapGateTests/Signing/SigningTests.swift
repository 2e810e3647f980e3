import Testing

/// Groups the tests of `Sources/MapGateTrust/Signing` so `swift test --filter Signing` selects them all.
@Suite enum SigningTests {}
