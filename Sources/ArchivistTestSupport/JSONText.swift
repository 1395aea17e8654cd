import ArchivistBase

/// Parses JSON text written in a test (a syntax error is a bug in the test, and fails it).
public func json(_ text: String) throws -> JSONValue {
    try JSONParser.parse(text)
}
