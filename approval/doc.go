// Package approval owns asking a person: the broker that puts a call's asks
// to a person (toolkit.Approver) and ask_user's questions (toolkit.Asker),
// remembered "allow for session" approvals, the ask_user tool, and the
// approval console.
//
// Channels. A client on protocol 2026-07-28 that declared elicitation gets
// an input-required result (multi round-trip) with a sealed requestState
// and retries the call with the answer. An older client that declared
// elicitation gets elicitation/create, sent by the broker under a deadline
// (the approval timeout). With [approval] console set, every ask is also
// listed on the console, and the first answer from either channel decides;
// a client that cannot elicit waits on the console alone. With neither, the
// ask is denied with approval_unavailable. A client that did not declare
// elicitation is never sent one.
//
// URL mode (urlmode.go, askpage.go). A client that declared URL-mode
// elicitation, with a console configured, gets each approval as a link to
// the console page of that one ask (also an ask_user question when it has
// no form). The person answers on the page, behind the console's own
// login; the client's accept only says the link was opened and is never an
// answer, its decline or cancel refuses. The link holds the ask's id only,
// which authorises nothing.
//
// One inbox. The console's address is shared by the user's servers
// (inbox.go): the first to listen serves the page and a rendezvous unix
// socket in the user's runtime folder; the others join it, post their asks
// there (labelled by pid and name) and get the page's answers back; when it
// exits, one of them takes the address over. Whenever a server becomes the
// hub other than by its first start on a free address (a takeover, or the
// console coming back after it was unavailable) it serves with a fresh
// token and CSRF token and no logins: whoever listened on the address in
// between may have been sent the person's cookie. The person's open page
// then logs in again with the new URL (stderr, console.token). While the
// console is unavailable no login URL is given out (LoginURL is ""), so
// the desktop notification has no action then. Peer uids are checked with
// SO_PEERCRED; the protocol (wire.go) is bounded and strictly parsed.
//
// Answers. Only accept with exactly {"decision": "allow_once" |
// "allow_for_session"} approves (reason approved). Decline, a "deny"
// decision, a missing or unknown decision, extra fields or an unknown action
// are declined; cancel is cancelled; no answer within
// approval.timeout_seconds is approval_timeout; a client that goes away
// while waiting is cancelled. A requestState that is forged, replayed or
// issued for a different tool, arguments, principal or set of requests is
// declined; an expired one is approval_timeout.
//
// Remembered approvals. allow_for_session stores the exact request keys
// (grants.Request.Key) asked about for the principal, each for its rule's
// approval_expires_seconds (0: not stored, so it means once). A later call
// whose asks are all remembered is approved without asking (reason
// approved_for_session). Memory only, per principal, bounded.
//
// Security model and limits. The sealing key is made on first use from
// crypto/rand and never leaves the process; a restart voids states in
// flight. The state carries digests only. Nonces are single-use and kept
// until they expire. What is not protected: a person who approves without
// reading; another local user who can read the console token file (it is
// 0600 in the user's state folder, and a same-user process may join the
// inbox and learn it); the console is plain HTTP on loopback.
package approval
