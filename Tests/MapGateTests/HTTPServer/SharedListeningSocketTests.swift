import Foundation
import Synchronization
import TestSupport
import Testing
@testable import MapGateServer

#if canImport(Glibc)
import Glibc
#endif

/// System mode's tile port (issue 36): the service holds one listening socket, and each session's
/// server serves a duplicate of it and hands it back when it stops (``HTTPListener/duplicate()``,
/// `MHD_quiesce_daemon`).
@Suite struct SharedListeningSocketTests {
    final class Answer: HTTPRequestHandler {
        func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
            HTTPServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data("ok\n".utf8))
        }
    }

    /// Answers its first request once `release` is signalled, saying so on `entered` first; the
    /// others at once.
    final class Held: HTTPRequestHandler, @unchecked Sendable {
        let entered: DispatchSemaphore
        let release: DispatchSemaphore
        let first = Atomic<Bool>(true)
        init(entered: DispatchSemaphore, release: DispatchSemaphore) {
            self.entered = entered
            self.release = release
        }
        func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
            if first.exchange(false, ordering: .relaxed) {
                entered.signal()
                release.wait()
            }
            return HTTPServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data("held\n".utf8))
        }
    }

    /// Answers `next`.
    final class Next: HTTPRequestHandler {
        func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
            HTTPServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data("next\n".utf8))
        }
    }

    /// A server's settings on 127.0.0.1 at `port`.
    static func settings(port: UInt16) -> HTTPServer.Settings {
        var settings = HTTPServer.Settings()
        settings.host = "127.0.0.1"
        settings.port = port
        settings.hostPolicy = HTTPHostPolicy(boundHost: "127.0.0.1")
        return settings
    }

    /// One request on a new connection: its status line's code, nil when the connection ended
    /// first (the server stopping under it, or refused).
    static func ask(port: UInt16) -> Int? {
        guard let socket = LoopbackSocket.connect(port: port, timeout: 2) else { return nil }
        defer { close(socket) }
        let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        guard send(socket, request, request.utf8.count, Int32(MSG_NOSIGNAL)) == request.utf8.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(socket, &buffer, buffer.count, 0)
        guard count >= 12 else { return nil }
        return Int(String(decoding: buffer[9..<12], as: UTF8.self))
    }

    /// A server handing the socket back answers the requests of the connections it had taken,
    /// each closed after its answer, before it closes the idle ones: a new connection whose client
    /// sends its head just after the stop began, one whose head was half in, and a keep-alive one
    /// answered just before (found by attacks: clients got an empty reply at the switch between a
    /// session's server and the closed door). The next server takes what comes after.
    @Test func connectionsTakenBeforeTheStopAreAnswered() throws {
        let held = try HTTPListener(host: "127.0.0.1", port: 0)
        let port = held.port
        let settings = Self.settings(port: port)
        for (halfHead, keptAlive) in [(false, false), (true, false), (false, true)] {
            let server = try HTTPServer(listener: held.duplicate(), settings: settings) { Answer() }
            let connection = try RawConnection(port: port)
            if halfHead { connection.send("GET /health HTTP/1.1\r\n") }
            if keptAlive {
                // Answered just before the stop; its next request comes just after it began.
                connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                #expect(connection.readResponse()?.status == 200)
            }
            #expect(waitUntil { server.openConnections == 1 }, "the server took the connection")
            if halfHead { usleep(300_000) }  // the server's watchdog has seen the bytes
            let stopped = DispatchSemaphore(value: 0)
            // A thread of its own: the global queue's few threads may all be another test's.
            Thread {
                server.stop()
                stopped.signal()
            }.start()
            usleep(50_000)
            connection.send((halfHead ? "" : "GET /health HTTP/1.1\r\n") + "Host: 127.0.0.1:\(port)\r\n\r\n")
            let response = connection.readResponse()
            #expect(response?.status == 200 && response?.headers["connection"] == "close", "half head \(halfHead), kept alive \(keptAlive): \(String(describing: response?.headerLines))")
            #expect(stopped.wait(timeout: .now() + 3) == .success, "the stop ends within its grace")
        }
        let next = try HTTPServer(listener: held.duplicate(), settings: settings) { Answer() }
        defer { next.stop() }
        #expect(Self.ask(port: port) == 200, "the next server answers")
    }

    /// Once a server handing the socket back began to stop, it takes no new connection, even
    /// while it waits for a request under way: the connection waits in the socket's queue and the
    /// next server answers it (on h2o, the loops kept accepting until the stop's end, and the
    /// stopping server took it; `ch2o_quiesce` since).
    @Test func aConnectionMadeAfterTheStopBeganIsTheNextServers() throws {
        let held = try HTTPListener(host: "127.0.0.1", port: 0)
        let port = held.port
        let settings = Self.settings(port: port)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let handler = Held(entered: entered, release: release)
        let server = try HTTPServer(listener: held.duplicate(), settings: settings) { handler }
        let busy = try RawConnection(port: port)
        busy.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(entered.wait(timeout: .now() + 3) == .success, "the request is being answered")
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            server.stop()
            stopped.signal()
        }.start()
        usleep(100_000)
        let late = try RawConnection(port: port)
        late.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        usleep(300_000)  // the stopping server would have answered it by now
        release.signal()
        #expect(busy.readResponse()?.status == 200, "the request under way is answered")
        #expect(stopped.wait(timeout: .now() + 3) == .success, "the stop ends within its grace")
        let next = try HTTPServer(listener: held.duplicate(), settings: settings) { Next() }
        defer { next.stop() }
        let answer = late.readResponse()
        #expect(answer.map { String(decoding: $0.body, as: UTF8.self) } == "next\n", "the next server answers: \(String(describing: answer?.headerLines))")
    }

    /// Servers started and stopped on the held socket one after another while clients keep
    /// connecting: the process lives, and the socket still listens after them all (found by an
    /// attack: libmicrohttpd 0.9.75 aborted the service, "Failed to remove listen FD from epoll
    /// set", when a server using epoll was quiesced while a worker took the socket out of its set;
    /// servers on a shared socket poll since).
    @Test func serversComeAndGoOnAHeldSocketUnderLoad() throws {
        let held = try HTTPListener(host: "127.0.0.1", port: 0)
        let port = held.port
        var settings = Self.settings(port: port)
        settings.threads = 2
        let done = Atomic<Bool>(false)
        let answered = Atomic<Int>(0)
        let clients = DispatchGroup()
        for _ in 0..<4 {
            // Threads of their own: the global queue's few threads may all be another test's.
            clients.enter()
            Thread {
                while !done.load(ordering: .relaxed) {
                    if Self.ask(port: port) == 200 { answered.add(1, ordering: .relaxed) }
                }
                clients.leave()
            }.start()
        }
        for cycle in 0..<1_500 {
            let server = try HTTPServer(listener: held.duplicate(), settings: settings) { Answer() }
            if cycle % 3 == 0 { usleep(UInt32.random(in: 0...2_000)) }
            server.stop()
        }
        done.store(true, ordering: .relaxed)
        clients.wait()
        #expect(answered.load(ordering: .relaxed) > 0, "the servers answered while they ran")
        let last = try HTTPServer(listener: held.duplicate(), settings: settings) { Answer() }
        defer { last.stop() }
        #expect(Self.ask(port: port) == 200, "the held socket still listens")
    }
}
