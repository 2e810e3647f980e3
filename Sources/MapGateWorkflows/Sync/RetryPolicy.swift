import FoundationEssentials
import MapGateBase

/// How often and how patiently a download is retried after a network error or a 5xx.
public struct RetryPolicy: Sendable {
    /// Tries in a row that may fail without moving the download on by ``progressBytes``; 1: a
    /// failed try is never retried, whatever it brought.
    public var maxAttempts: Int
    /// What a failed try must have brought to count as progress: the tries start again from
    /// the first (and the backoff from ``initialDelay``). 16 KiB: a link that drops every few
    /// seconds at a few KB/s still gets there; one that cuts every answer after a few hundred
    /// bytes does not hold the run for ever.
    public var progressBytes: Int64 = 16 << 10
    /// Seconds before the second attempt; doubled after each further failure.
    public var initialDelay: Double
    /// Waits between attempts; injected so tests need not sleep.
    public var sleep: @Sendable (Double) -> Void

    public init(maxAttempts: Int = 4, initialDelay: Double = 1, sleep: @escaping @Sendable (Double) -> Void = { Threads.sleep($0) }) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.sleep = sleep
    }

    /// Whether a failed try that brought `bytes` moved the download on (and retries are allowed).
    func isProgress(_ bytes: Int64) -> Bool {
        maxAttempts > 1 && bytes >= progressBytes
    }

    func delay(afterAttempt attempt: Int) -> Double {
        initialDelay * Double(sign: .plus, exponent: attempt - 1, significand: 1)
    }
}
