import ArchivistBase
import ArchivistStore
import Testing

@testable import ArchivistPostgres

/// Filters over a typed column that holds every value at its path (`holdsEveryValue`) compile to
/// the column alone: a NULL there means no value, so the `jsonb` side is the condition's answer
/// for a missing field, and a B-tree answers the whole filter.
@Suite("filters over a column that holds every value")
struct WholeColumnFilterTests {
    /// The filter's predicate with its parameters numbered as they are sent.
    static func compiled(_ text: String, holdsEveryValue: Bool) throws -> SQLPredicate {
        var column = ReplicaColumn(path: "section_name", name: "section_name", kind: .text)
        column.holdsEveryValue = holdsEveryValue
        var compiler = SQLFilter(columns: [column])
        let predicate = compiler.compile(try FilterParser.parse(text))
        return SQLPredicate(
            sure: SQLFilter.bind(predicate.sure, compiler.parameters).sql,
            possible: SQLFilter.bind(predicate.possible, compiler.parameters).sql)
    }

    @Test(
        "each condition reads the column alone, with a missing field's answer where it is NULL",
        arguments: [
            ("section_name = Sports", #"("section_name" IS NOT NULL AND "section_name" = ANY($1::text[]))"#),
            ("section_name in (Sports, Arts)", #"("section_name" IS NOT NULL AND "section_name" = ANY($1::text[]))"#),
            ("section_name != Sports", #"(NOT ("section_name" IS NOT NULL AND "section_name" = ANY($1::text[])))"#),
            ("section_name exists", #"("section_name" IS NOT NULL AND TRUE)"#),
            ("section_name missing", #"(NOT ("section_name" IS NOT NULL AND TRUE))"#),
            ("section_name = null", #"("section_name" IS NULL AND TRUE)"#),
            ("section_name > M", #"("section_name" IS NOT NULL AND "section_name" COLLATE "C" > $1::text)"#),
        ])
    func wholeColumn(filter: String, sql: String) throws {
        let predicate = try Self.compiled(filter, holdsEveryValue: true)
        #expect(predicate.isExact, "\(predicate)")
        #expect(predicate.sure == sql)
    }

    @Test("a column that may miss values keeps the document's path for rows where it is NULL")
    func partialColumn() throws {
        let predicate = try Self.compiled("section_name = Sports", holdsEveryValue: false)
        #expect(predicate.sure.contains("\"section_name\" IS NULL AND"))
        #expect(predicate.sure.contains("jsonb_path_match(doc"))
    }

    @Test("the promise is kept in the column's JSON, and a column written before it is read as partial")
    func promiseRoundTrip() throws {
        var column = ReplicaColumn(path: "section_name", name: "section_name", kind: .text)
        column.holdsEveryValue = true
        #expect(ReplicaColumn(json: column.json)?.holdsEveryValue == true)
        let older = try JSONParser.parse(#"{"path":"section_name","name":"section_name","type":"text","indexed":true}"#)
        #expect(ReplicaColumn(json: older)?.holdsEveryValue == false)
    }
}
