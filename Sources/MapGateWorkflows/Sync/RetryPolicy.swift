import FoundationEssentials
import MapGateBase

/// How often and how patiently a download is retried after a network error or a 5xx.
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    /// Seconds before the second attempt; doubled after each further failure.
    public var initialDelay: Double
    /// Waits between attempts; injected so tests need not sleep.
    public var sleep: @Sendable (Double) -> Void

    public init(maxAttempts: Int = 4, initialDelay: Double = 1, sleep: @escaping @Sendable (Double) -> Void = { Threads.sleep($0) }) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.sleep = sleep
    }

    func delay(afterAttempt attempt: Int) -> Double {
        initialDelay * Double(sign: .plus, exponent: attempt - 1, significand: 1)
    }
}
