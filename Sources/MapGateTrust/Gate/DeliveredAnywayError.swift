/// Thrown by a delivery step (``GateAuthorization/deliver(_:)``) that failed after its result had
/// reached the user: a temporary tile file that could be neither renamed into place nor removed,
/// whose bytes are there to read. The use is kept, and ``underlying`` is what the run reports.
public struct DeliveredAnywayError: Error {
    public let underlying: any Error

    public init(_ underlying: any Error) {
        self.underlying = underlying
    }
}
