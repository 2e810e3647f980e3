/// Where an answer goes: the HTTP library's way of queueing it on the request's connection
/// (``MicroHTTPDConnection``, ``H2ORequest``). ``HTTPDaemonContext`` decides the answer, its
/// budget and its log entry; a sink only hands it to its library.
protocol HTTPAnswerSink {
    /// Queues `response` for a request made with `method`. `body` owns the bytes of a body made or
    /// shared for this answer (released when the library is done with them); nil for a prepared
    /// answer or a stream. `closing`: close the connection after it. False when it could not be
    /// queued (the library then closes the connection without an answer), and for
    /// ``HTTPServerResponse/dropsConnection``.
    func queue(_ response: HTTPServerResponse, body: HTTPBodyBox?, method: String, closing: Bool) -> Bool
}
