"""Text for synthetic memory: varied, topic-shaped sentences and the planted facts recall is measured on.

Filler text draws from topic vocabularies so that search has something real to separate; planted facts use
words that filler text never uses, so each fact has exactly one right answer (or a known superseded one).
"""
from __future__ import annotations

import random
from dataclasses import dataclass

TOPICS: dict[str, tuple[str, ...]] = {
    "search": ("index", "ranking", "query", "tokenizer", "stemmer", "synonym", "facet", "snippet", "autocomplete"),
    "billing": ("invoice", "refund", "subscription", "coupon", "checkout", "receipt", "tax", "proration", "dunning"),
    "newsletter": ("digest", "subscriber", "unsubscribe", "template", "bounce", "campaign", "headline", "archive"),
    "deploy": ("pipeline", "container", "rollback", "canary", "artifact", "release", "migration", "healthcheck"),
    "docs": ("tutorial", "reference", "changelog", "screenshot", "example", "glossary", "quickstart", "faq"),
    "onboarding": ("signup", "welcome", "tour", "invite", "activation", "trial", "checklist", "profile"),
    "api": ("endpoint", "pagination", "webhook", "schema", "client", "ratelimit", "token", "payload", "version"),
    "analytics": ("dashboard", "funnel", "cohort", "event", "retention", "conversion", "pageview", "segment"),
    "support": ("ticket", "reply", "macro", "escalation", "complaint", "inbox", "survey", "satisfaction"),
    "performance": ("latency", "cache", "profile", "bundle", "query", "memory", "throughput", "timeout", "cpu"),
    "security": ("password", "session", "audit", "permission", "scanner", "dependency", "header", "csrf"),
    "i18n": ("translation", "locale", "plural", "currency", "timezone", "glossary", "string", "fallback"),
    "mobile": ("layout", "viewport", "gesture", "offline", "notification", "icon", "splash", "orientation"),
    "pricing": ("plan", "tier", "discount", "annual", "seat", "quote", "comparison", "upgrade", "downgrade"),
}
VERBS = ("fix", "rewrite", "measure", "ship", "review", "refactor", "profile", "document", "test", "trim",
         "simplify", "migrate", "rename", "split", "merge", "cache", "retry", "validate", "publish", "audit")
ADJECTIVES = ("slow", "flaky", "stale", "broken", "duplicate", "missing", "oversized", "noisy", "legacy",
              "fragile", "empty", "partial", "cold", "hot", "unused", "verbose", "nested", "orphaned")
TOOLS = ("pytest", "lighthouse", "curl", "sqlite", "grep", "the profiler", "the staging site", "git bisect",
         "the load script", "the linter", "the browser console", "the cron log", "the error tracker")
OUTCOMES = ("passed", "failed twice", "went from 840 ms to 310 ms", "showed no change", "halved",
            "timed out", "matched the spec", "regressed by 12%", "was within budget", "needed a second pass")
REASONS = ("blocked on a human decision", "staging was down for maintenance", "the upstream API returned 503",
           "waiting for review of the previous change", "the task was already done by the human",
           "tests broke on main and fixing them took the cycle", "budget for the day was spent")

_LINE_TEMPLATES = (
    "ran {tool} against the {noun}; it {outcome}",
    "the {adj} {noun} came from the {noun2} step, not the {noun3}",
    "tried to {verb} the {noun} first, then the {noun2}",
    "{tool} shows the {noun} {outcome} after the change",
    "compared the {adj} {noun} with the {noun2} from last week",
    "the {noun} check {outcome} on the second run",
    "kept the {noun2} as is; only the {noun} needed to {verb}",
    "found a {adj} {noun} in the {topic} code path",
    "wrote a small test for the {noun} and the {noun2}",
    "{verb} of the {noun} is done; the {adj} {noun2} is next",
)


@dataclass(frozen=True)
class Fact:
    """A planted fact: `text` goes into one entry; `query` are the words someone would search with."""

    kind: str          # log | lesson | decision
    text: str
    query: str


FACTS: tuple[Fact, ...] = (
    Fact("log", "the sitemap skipped every page tagged walrus because the slug filter dropped underscores",
         "sitemap walrus slug underscores"),
    Fact("log", "the Quetzal exporter wrote CSV with semicolons, so spreadsheet imports split every row",
         "quetzal exporter semicolons spreadsheet"),
    Fact("log", "the favicon request hit the origin 40 times a minute until the CDN rule for ico files landed",
         "favicon origin cdn ico"),
    Fact("log", "heliotrope theme contrast failed WCAG AA on the footer links; darkened them to #4a2f6b",
         "heliotrope contrast wcag footer"),
    Fact("log", "the nightly backup to the Marmot bucket took 47 minutes after images stopped being deduplicated",
         "marmot backup bucket deduplicated"),
    Fact("log", "RSS readers showed every item twice because the guid changed with the tracking parameter",
         "rss guid twice tracking parameter"),
    Fact("log", "the Oolong cron job ran at 03:15 and collided with the database vacuum",
         "oolong cron vacuum collided"),
    Fact("log", "captcha provider Gryphonkey rejected all Safari users after their cookie change",
         "gryphonkey captcha safari cookie"),
    Fact("log", "moved the image resizer from Pillow to libvips and thumbnails went from 900 ms to 60 ms",
         "libvips pillow thumbnails resizer"),
    Fact("log", "the Kestrel webhook retried forever on HTTP 410; capped retries at five with a dead-letter table",
         "kestrel webhook 410 dead-letter"),
    Fact("log", "Lisbon users saw prices in dollars because the geoip database was eighteen months old",
         "lisbon geoip prices dollars"),
    Fact("log", "the password reset email landed in spam at Fastmail until SPF included the relay",
         "password reset spam fastmail spf"),
    Fact("log", "the markdown renderer choked on nested blockquotes deeper than seven levels",
         "markdown nested blockquotes seven levels"),
    Fact("log", "search for umlauts like Müller returned nothing until the tokenizer folded diacritics",
         "umlauts müller diacritics tokenizer"),
    Fact("log", "the zebra-striped tables on the changelog page broke printing on A4 paper",
         "zebra striped tables printing a4"),
    Fact("log", "the uptime monitor Pelican paged at 04:00 because of daylight saving time",
         "pelican uptime daylight saving"),
    Fact("log", "the referral link for the Abacus partner program lost its code on redirect",
         "abacus referral redirect partner"),
    Fact("log", "the sqlite file grew to 3.1 GB because deleted drafts were never vacuumed",
         "sqlite drafts vacuumed grew"),
    Fact("log", "the Tamarind CSV import treated the date 03/04 as April in the US locale",
         "tamarind import date locale april"),
    Fact("log", "the mobile menu overlapped the cookie banner on the Galaxy Fold inner screen",
         "galaxy fold menu cookie banner"),
    Fact("lesson", "the agent guessed the time from the last log entry instead of reading the clock, so the "
         "Saturday report carried Friday's date", "guessed time clock saturday report"),
    Fact("lesson", "a refactor of the Nightjar parser passed tests but dropped footnotes, because no test had "
         "footnotes", "nightjar parser footnotes test"),
    Fact("lesson", "publishing straight after a schema migration broke the cached pages for an hour",
         "schema migration cached pages publishing"),
    Fact("lesson", "the agent redid the pricing table the human had already fixed, because it read Pending "
         "and skipped Resolved", "redid pricing table resolved pending"),
    Fact("lesson", "the Borealis staging key expired silently and every preview looked like production",
         "borealis staging key expired preview"),
    Fact("lesson", "three no-build cycles in a row came from waiting on the Juniper vendor instead of "
         "working around it", "juniper vendor waiting no-build"),
    Fact("decision", "should the weekly digest move from Tuesday to Thursday mornings for the Wombat audience",
         "weekly digest thursday wombat"),
    Fact("decision", "adopt the Halcyon analytics script or keep self-hosted counters without cookies",
         "halcyon analytics self-hosted counters"),
    Fact("decision", "raise the free tier from three to five Mandolin projects per account",
         "free tier mandolin projects"),
    Fact("decision", "drop support for Internet Explorer mode in the Quokka embed widget",
         "internet explorer quokka embed"),
    Fact("decision", "pay for the Lyrebird translation service for Portuguese and Polish",
         "lyrebird translation portuguese polish"),
    Fact("decision", "allow the agent to reply to Tangerine support tickets without human review",
         "tangerine support tickets review"),
)

# Supersession: an older LOG entry states X, a newer one states the replacement.
SUPERSEDED: tuple[tuple[str, str, str], ...] = (
    ("the newsletter is sent through Brevo at 07:00 UTC on Tuesdays",
     "the newsletter now goes out through Postmark at 09:30 UTC on Tuesdays, replacing Brevo",
     "newsletter sent through postmark brevo tuesdays"),
    ("the staging database lives on host fsn1-db2 with nightly snapshots",
     "the staging database moved from fsn1-db2 to host hel1-db5; fsn1-db2 is decommissioned",
     "staging database host fsn1-db2 hel1-db5"),
)


class TextGen:
    """Deterministic filler text for one seed."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.topics = list(TOPICS)

    def topic(self) -> str:
        return self.rng.choice(self.topics)

    def line(self, topic: str) -> str:
        nouns = TOPICS[topic]
        pick = self.rng.choice
        return pick(_LINE_TEMPLATES).format(
            tool=pick(TOOLS), noun=pick(nouns), noun2=pick(nouns), noun3=pick(nouns), adj=pick(ADJECTIVES),
            verb=pick(VERBS), outcome=pick(OUTCOMES), topic=topic)

    def lines(self, topic: str, count: int) -> list[str]:
        return [self.line(topic) for _ in range(count)]

    def task(self, topic: str) -> str:
        pick = self.rng.choice
        return f"{pick(VERBS)} the {pick(ADJECTIVES)} {pick(TOPICS[topic])} in {topic}"

    def reason(self) -> str:
        return self.rng.choice(REASONS)

    def title(self, topic: str) -> str:
        pick = self.rng.choice
        return f"{pick(VERBS).capitalize()} {pick(TOPICS[topic])} {pick(TOPICS[topic])} ({topic})"
