import Foundation

/// Polls `condition` every `interval` seconds until it holds or `timeout` seconds have passed;
/// true when it held. What a test waits on instead of sleeping a guessed time: a slow machine (or
/// a sanitizer) gets its seconds, and code that never gets there still fails.
public func waitUntil(timeout: Double = 10, interval: Double = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        Thread.sleep(forTimeInterval: interval)
    }
}
