import CH2O

/// An answer's header fields laid out for h2o's glue (`ch2o_respond`), on the stack for the one
/// call: one buffer of names and values, and the glue's array of fields pointing into it (the
/// glue copies what it keeps). Nothing is allocated per answer, and nothing is kept per cached
/// tile (a block kept with each prepared answer cost 7 MB with 21,845 tiles cached; issue 42).
/// `Content-Length` is left out: the glue sends the length it is given.
enum H2OHeaderFields {
    /// Calls `body` with the fields and their count (fields that ``HTTPServerResponse/canSend(_:)``
    /// passes: the caller checks).
    static func with<Result>(_ headers: [(name: String, value: String)], _ body: (UnsafePointer<ch2o_header>?, Int) -> Result) -> Result {
        var length = 0
        var count = 0
        for (name, value) in headers where !isContentLength(name) {
            length += name.utf8.count + value.utf8.count
            count += 1
        }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(length, 1)) { text in
            withUnsafeTemporaryAllocation(of: ch2o_header.self, capacity: max(count, 1)) { fields in
                let base = UnsafeRawPointer(text.baseAddress!).assumingMemoryBound(to: CChar.self)
                var at = 0
                var index = 0
                for (name, value) in headers where !isContentLength(name) {
                    let nameStart = at
                    at = text[at...].initialize(fromContentsOf: name.utf8)
                    let valueStart = at
                    at = text[at...].initialize(fromContentsOf: value.utf8)
                    fields.initializeElement(
                        at: index, to: ch2o_header(name: base + nameStart, name_length: valueStart - nameStart, value: base + valueStart, value_length: at - valueStart))
                    index += 1
                }
                return body(UnsafePointer(fields.baseAddress), count)
            }
        }
    }

    private static func isContentLength(_ name: String) -> Bool {
        HTTPServerRequest.equalIgnoringASCIICase(name, "Content-Length")
    }
}
