import MapGate
@testable import mapgate
import Testing

/// The download bar's rate and time left (issue 27: "659.5 MB/s … 0:00 left" at the start).
@Suite struct ProgressBarTests {
    @Test(arguments: [
        (Int64(4 << 20), Double(0.05)),  // the first packets, in 50 ms: no rate yet
        (Int64(1 << 10), Double(3)),  // three seconds, 1 KiB: no rate yet
    ])
    func noRateBeforeItMeansSomething(received: Int64, elapsed: Double) {
        #expect(ProgressBar.speed(received: received, of: 100 << 20, elapsed: elapsed) == "–/s –:–– left")
    }

    @Test func theRateIsOfThisRunsBytesOverItsTime() {
        // 10 MiB in 2 s: 5 MiB/s; 50 MiB to go: 10 s.
        let text = ProgressBar.speed(received: 10 << 20, of: 50 << 20, elapsed: 2)
        #expect(text.hasSuffix("/s 0:10 left"), "\(text)")
        #expect(text.hasPrefix("5.2 MB/s") || text.hasPrefix("5.0 MiB/s"), "\(text)")
    }

    @Test func durationsPastAnHourHaveHours() {
        #expect(ProgressBar.duration(3725) == "1:02:05")
        #expect(ProgressBar.duration(59.6) == "1:00")
    }
}
