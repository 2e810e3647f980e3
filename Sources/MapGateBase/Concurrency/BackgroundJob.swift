import Dispatch
import FoundationEssentials

/// Work started on another thread now, whose result (or error) is collected later with `wait()`.
///
/// `@unchecked Sendable`: `result` is written once, on the worker, before `group.leave()`, and
/// read only after `group.wait()` returned, which orders the two.
package final class BackgroundJob<Value: Sendable>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var result: Result<Value, any Error>?

    /// A thread that cannot be started is the job's error, thrown by `wait()`.
    package init(_ body: @escaping @Sendable () throws -> Value) {
        group.enter()
        do {
            try Threads.detach { [self] in
                result = Result { try body() }
                group.leave()
            }
        } catch {
            result = .failure(error)
            group.leave()
        }
    }

    /// Waits for the job and returns its value, or throws its error.
    package func wait() throws -> Value {
        group.wait()
        guard let result else { throw GeneralFailure(L.localized("a background job ended without a result")) }
        return try result.get()
    }
}
