import ArchivistBase
import ArchivistClient
import ArchivistShell
import ArchivistStore
import ArchivistTestSupport
import Foundation
import Testing

/// Tab completion offers saved search names where a name goes.
@Suite("completion of saved search names")
struct SavedSearchCompletionTests {
    @Test func completionOffersSavedSearchNamesAfterRefreshAndDrop() throws {
        let sandbox = try TemporaryFolder()
        defer { sandbox.remove() }
        let store = try DocumentStore(folder: sandbox.data, schema: .nyt)
        let saved = SavedSearches(store: store)
        try saved.save(SavedSearch(name: "climate", request: SearchRequest(query: "climate"), savedAt: Date()))
        try saved.save(SavedSearch(name: "desks", request: SearchRequest(filterQuery: #"news_desk:"Sports""#), savedAt: Date()))
        let shell = Shell(dataFolder: sandbox.data, output: TextSink(), errors: TextSink())
        #expect(Set(shell.completions(for: "refresh ")) == ["climate", "desks"])
        #expect(Set(shell.completions(for: "refresh climate d")) == ["climate", "desks"])
        #expect(Set(shell.completions(for: "searches --drop ")) == ["climate", "desks"])
        #expect(shell.completions(for: "search --sort ") == ["newest", "oldest", "relevance"])
        #expect(shell.completions(for: "search clim").isEmpty, "query words are free text")
        #expect(shell.completions(for: "search --p").contains("--pages"))
    }
}
