/// The built-in demo tenant (documented in docs/emulator.md): three applications, four users (password, one-time
/// code, MFA, MFA registration), sign-up attributes and two sample APIs.
extension EmulatorConfig {
    public static var demo: EmulatorConfig {
        var c = EmulatorConfig()
        c.clients = demoClients
        c.users = demoUsers
        c.signUpAttributes = demoSignUpAttributes
        c.apis = demoAPIs
        return c
    }

    private static let demoClients: [ClientApp] = [
        ClientApp(
            clientID: "00001111-aaaa-2222-bbbb-3333cccc4444",
            name: "NativeAuth demo (public, native auth)",
            isPublic: true,
            nativeAuthEnabled: true,
            redirectURIs: [],
            consentedScopes: nil
        ),
        ClientApp(
            clientID: "99990000-ffff-8888-eeee-7777dddd6666",
            name: "Web app (confidential)",
            isPublic: false,
            nativeAuthEnabled: false,
            redirectURIs: [],
            consentedScopes: nil
        ),
        ClientApp(
            clientID: "55556666-bbbb-7777-cccc-8888dddd9999",
            name: "Public client without native auth",
            isPublic: true,
            nativeAuthEnabled: false,
            redirectURIs: [],
            consentedScopes: nil
        ),
    ]

    private static let demoUsers: [UserRecord] = [
        UserRecord(
            email: "ann@contoso.com",
            password: "Demo-Passw0rd!",
            displayName: "Ann Example",
            givenName: "Ann",
            surname: "Example",
            attributes: ["city": "Seattle"],
            objectID: "11110000-aaaa-4bbb-8ccc-000000000001",
            mfaEmail: nil,
            mfaRequired: false
        ),
        UserRecord(
            email: "olivia@contoso.com",
            password: nil,
            displayName: "Olivia Otp",
            givenName: "Olivia",
            surname: "Otp",
            attributes: [:],
            objectID: "11110000-aaaa-4bbb-8ccc-000000000002",
            mfaEmail: nil,
            mfaRequired: false,
            oidcPreferredUsername: false
        ),
        UserRecord(
            email: "mike@contoso.com",
            password: "Mfa-Passw0rd!",
            displayName: "Mike Mfa",
            givenName: "Mike",
            surname: "Mfa",
            attributes: [:],
            objectID: "11110000-aaaa-4bbb-8ccc-000000000003",
            mfaEmail: "mike.backup@fabrikam.com",
            mfaRequired: true
        ),
        UserRecord(
            email: "rita@contoso.com",
            password: "Reg-Passw0rd!",
            displayName: "Rita Register",
            givenName: "Rita",
            surname: "Register",
            attributes: [:],
            objectID: "11110000-aaaa-4bbb-8ccc-000000000004",
            mfaEmail: nil,
            mfaRequired: true
        ),
    ]

    private static let demoSignUpAttributes: [AttributeDefinition] = [
        AttributeDefinition(name: "displayName", type: "string", required: true, regex: nil),
        AttributeDefinition(name: "city", type: "string", required: false, regex: nil),
        AttributeDefinition(name: "postalCode", type: "string", required: false, regex: "^[0-9]{5}$"),
    ]

    private static let demoAPIs: [ProtectedAPIConfig] = [
        ProtectedAPIConfig(
            name: "ToDoList",
            appID: "11112222-bbbb-3333-cccc-4444dddd5555",
            path: "/api/todolist",
            permissions: ["ToDoList.Read", "ToDoList.ReadWrite"],
            readPermissions: ["ToDoList.Read", "ToDoList.ReadWrite"],
            writePermissions: ["ToDoList.ReadWrite"]
        ),
        ProtectedAPIConfig(
            name: "Notes",
            appID: "22223333-cccc-4444-dddd-5555eeee6666",
            path: "/api/notes",
            permissions: ["Notes.Read", "Notes.ReadWrite"],
            readPermissions: ["Notes.Read", "Notes.ReadWrite"],
            writePermissions: ["Notes.ReadWrite"]
        ),
    ]
}
