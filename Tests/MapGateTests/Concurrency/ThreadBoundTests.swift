import Dispatch
import Foundation
import MapGate
@testable import MapGateBase
import Testing

/// The owner box (issue 28, swift-nio's `NIOLoopBound`): its owner reads and writes it; in a
/// debug build any other thread that touches it stops the process, which an exit test (a child
/// process the test library starts) observes.
@Suite struct ThreadBoundTests {
    @Test func theThreadThatMadeItReadsAndWritesIt() {
        let box = ThreadBound([1, 2])
        box.value.append(3)
        #expect(box.value == [1, 2, 3])
    }

    /// Work on the owning queue, `async` or `sync`, from whichever thread libdispatch picks.
    @Test func workOnItsQueueReadsAndWritesIt() {
        let queue = DispatchQueue(label: "mapgate.test.owner")
        let box = ThreadBound(0, queue: queue)
        let group = DispatchGroup()
        for _ in 0..<100 { queue.async(group: group) { box.value += 1 } }
        group.wait()
        #expect(queue.sync { box.value } == 100)
    }

    #if DEBUG
    @Test func anotherThreadTouchingItStopsTheProcess() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = ThreadBound(1)
            let done = DispatchSemaphore(value: 0)
            try Threads.detach {
                box.value += 1
                done.signal()
            }
            done.wait()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("a ThreadBound<Int> was touched off the thread that owns it"), "\(stderr)")
    }

    @Test func aThreadOffItsQueueTouchingItStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let box = ThreadBound(1, queue: DispatchQueue(label: "mapgate.test.owner"))
            _ = box.value
        }
    }
    #endif
}
