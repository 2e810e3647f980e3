import CH2O

/// An answer's header fields laid out for h2o's glue (`ch2o_respond`): one buffer of names and
/// values, and the glue's array of fields pointing into it. Made per answer, or once for a
/// prepared answer (``HTTPPreparedResponse/h2oHeaders()``), which then sends every later time
/// without laying anything out again. `Content-Length` is left out (the glue sends the length it
/// is given).
final class H2OHeaderBlock: @unchecked Sendable {  // immutable once made
    let fields: UnsafeMutableBufferPointer<ch2o_header>
    private let text: UnsafeMutableBufferPointer<UInt8>

    /// Nil when a field holds a line break or a NUL: h2o writes a field as it is given, and one
    /// would split the answer.
    init?(_ headers: [(name: String, value: String)]) {
        let kept = headers.filter { !HTTPServerRequest.equalIgnoringASCIICase($0.name, "Content-Length") }
        var length = 0
        for (name, value) in kept {
            if Self.breaksLine(name) || Self.breaksLine(value) { return nil }
            length += name.utf8.count + value.utf8.count
        }
        text = .allocate(capacity: max(length, 1))
        fields = .allocate(capacity: max(kept.count, 1))
        var at = 0
        for (index, (name, value)) in kept.enumerated() {
            let nameStart = at
            at = text[at...].initialize(fromContentsOf: name.utf8)
            let valueStart = at
            at = text[at...].initialize(fromContentsOf: value.utf8)
            fields.initializeElement(at: index, to: ch2o_header(
                name: Self.chars(text.baseAddress! + nameStart), name_length: valueStart - nameStart,
                value: Self.chars(text.baseAddress! + valueStart), value_length: at - valueStart))
        }
        count = kept.count
    }

    /// How many fields there are.
    let count: Int

    deinit {
        fields.deallocate()
        text.deallocate()
    }

    private static func chars(_ pointer: UnsafeMutablePointer<UInt8>) -> UnsafePointer<CChar> {
        UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self)
    }

    private static func breaksLine(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }
}
