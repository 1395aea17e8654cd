import Foundation

/// The path of a fixture file of these tests (`Fixtures/`, a resource of this target).
func fixture(_ name: String) -> String {
    Bundle.module.resourceURL!.appendingPathComponent("Fixtures/" + name).path
}
