"""The labelled paraphrase set: facts planted in a synthetic history, each asked about in other words.

Every `Probe` is a fact planted in one memory entry, the words someone would search for it with, and a
question that shares no content word with the fact (checked with the index's own porter stemmer, see
`shared_stems`). `Superseded` pairs state a fact early and its replacement late; the question is again in
other words, and the newer entry must rank above the older one. `NEGATIVES` ask about things that were
never planted anywhere: the right answer is "no memory of that".

Where the facts go (`plant`): into a light copy's work tree, which recall indexes like any uncommitted edit:
- "log": a continuation line inside the Evidence field of a cycle entry, spread evenly over the history;
- "close": the last line of a daily close report made 40 lines long, so the fact sits deep in a long entry;
- "lesson" and "decision": new entries written with gitmem's own writer after the last LOG entry.
The set is split in two halves by position (`half`): weights and cuts are calibrated on half 0 and the
figures are reported on half 1.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path


@dataclass(frozen=True)
class Probe:
    kind: str              # log | close | lesson | decision
    fact: str
    keywords: str
    question: str


@dataclass(frozen=True)
class Superseded:
    old: str
    new: str
    question: str


PROBES: tuple[Probe, ...] = (
    Probe("log", "the checkout charged Swiss customers twice because currency rounding ran before the VAT step",
          "swiss charged twice rounding", "why were buyers from Switzerland billed double?"),
    Probe("log", "the newsletter landed in Gmail spam until DKIM signing was enabled for the sending domain",
          "gmail spam dkim", "why did our mailing go to junk folders at Google?"),
    Probe("log", "nightly backups stopped after the storage volume filled with old log archives",
          "nightly backups storage volume", "why did the overnight copies of our data quit?"),
    Probe("log", "the login form accepted expired passwords for two days after the auth library upgrade",
          "login expired passwords auth", "could people sign in with outdated credentials?"),
    Probe("log", "the homepage took nine seconds to load on phones because the hero image weighed 6 MB",
          "homepage nine seconds hero image", "why was the landing screen so sluggish on handsets?"),
    Probe("log", "raised the monthly fee of the Pro plan from 12 to 15 euros",
          "monthly fee pro euros", "how much do we charge per month for the premium tier?"),
    Probe("log", "the annual invoice PDF printed the old office address after the move to Porto",
          "annual invoice pdf office address porto", "why did yearly bills show an outdated street location?"),
    Probe("log", "the sitemap listed draft articles, and crawlers indexed unpublished posts",
          "sitemap draft articles crawlers unpublished", "how did unfinished stories end up visible to Google?"),
    Probe("log", "Brazilian translators delivered the Portuguese strings a week late",
          "brazilian translators portuguese late", "when did the localization vendor for South America miss "
          "the due date?"),
    Probe("log", "the reminder emails fired twice on the day clocks changed",
          "reminder emails fired twice clocks", "why did users receive each nudge two times when summer "
          "time began?"),
    Probe("log", "a customer in Japan could not pay because the card form rejected kana characters in the name field",
          "japan card form kana", "why did a Tokyo shopper fail to complete a purchase?"),
    Probe("log", "the dashboard counted bots as visitors, inflating traffic by forty percent",
          "bots visitors traffic forty percent", "why did our audience numbers look too high?"),
    Probe("log", "the podcast feed lost its cover art because the image URL switched to http",
          "podcast feed cover art", "why did the audio show's artwork disappear?"),
    Probe("log", "the free trial never ended for accounts created during the outage on March 3",
          "free trial never ended outage", "why did some evaluation periods go on forever?"),
    Probe("log", "the refund button sent money back in cents instead of euros, returning a hundredth of the amount",
          "refund cents euros hundredth", "why were reimbursements only one percent of what was owed?"),
    Probe("log", "the mobile app crashed on Android 9 when the font file was missing",
          "android crashed font file", "why did the smartphone client close unexpectedly on old devices?"),
    Probe("log", "the weekly report email showed last year's numbers because the date filter used the wrong year",
          "weekly report date filter wrong year", "why did the seven-day summary message contain stale figures "
          "from twelve months ago?"),
    Probe("log", "the CSV export cut off every row after 65,536 lines",
          "csv export row lines", "why was the spreadsheet download truncated?"),
    Probe("log", "our SSL certificate expired on Sunday and browsers showed a security warning",
          "ssl certificate expired sunday", "why did visitors see an untrusted connection alert over the weekend?"),
    Probe("log", "image uploads larger than 10 MB failed silently in the editor",
          "image uploads 10 mb editor", "why did big pictures never attach while writing posts?"),
    Probe("log", "the comment form was flooded by 3,000 spam messages from one IP address",
          "comment form flooded spam ip", "who bombarded the discussion section with junk?"),
    Probe("log", "the pricing page showed the old tiers in Safari because of a cached stylesheet",
          "pricing page tiers safari stylesheet", "why did Apple's browser display outdated plans?"),
    Probe("log", "two authors edited the same article and one lost an hour of work",
          "two authors edited same article lost hour", "when did simultaneous writers overwrite each other's draft?"),
    Probe("log", "the unsubscribe link opened a 404 page for readers of the French edition",
          "unsubscribe link 404 french edition", "why couldn't Paris subscribers opt out?"),
    Probe("log", "the load balancer dropped websocket connections every 60 seconds",
          "load balancer websocket connections", "why did live sockets disconnect each minute?"),
    Probe("log", "the API returned dates in the server's zone instead of UTC, shifting events by 120 minutes",
          "api dates zone utc shifting", "why were the endpoint's timestamps off by two hours?"),
    Probe("log", "the staging server ran out of disk because Docker images were never pruned",
          "staging disk docker pruned", "why did the pre-production machine fill its storage?"),
    Probe("log", "Stripe webhooks arrived out of order, so some subscriptions were cancelled right after renewal",
          "stripe webhooks order cancelled renewal", "why were memberships terminated just after being extended?"),
    Probe("log", "the help chat bubble covered the buy button on narrow screens",
          "chat bubble buy button narrow", "what hid the purchase control on small phones?"),
    Probe("log", "the author bio pages loaded every article ever written, taking twelve seconds",
          "author bio pages twelve seconds", "why was the writer profile view so slow?"),
    Probe("log", "the tag cloud treated uppercase and lowercase tags as different topics",
          "tag cloud uppercase lowercase", "why did labels that vary only by capitalization split into "
          "separate categories?"),
    Probe("log", "the affiliate dashboard paid commissions on refunded orders",
          "affiliate commissions refunded orders", "why did partners earn money for purchases that were returned?"),
    Probe("log", "the scheduled posts published one hour early in Australia",
          "scheduled posts early australia", "why did queued articles go live sooner than planned for Sydney "
          "readers?"),
    Probe("log", "the print stylesheet hid all code samples",
          "print stylesheet code samples", "why were programming snippets missing on paper?"),
    Probe("log", "a typo in robots.txt blocked search engines from the whole site for a week",
          "typo robots txt blocked search engines", "why did Google stop crawling us for seven days?"),
    Probe("log", "the signup form rejected email addresses with a plus sign",
          "signup rejected email plus sign", "why couldn't people register with tagged Gmail aliases?"),
    Probe("log", "the thumbnail service ran out of memory on animated GIFs",
          "thumbnail memory animated gifs", "why did the preview picture generator crash on moving images?"),
    Probe("log", "the sales tax for Texas was charged at the California rate",
          "sales tax texas california", "why did buyers in Austin pay the wrong levy?"),
    Probe("log", "the search autocomplete suggested deleted articles",
          "autocomplete suggested deleted articles", "why did type-ahead propose removed stories?"),
    Probe("log", "the database migration locked the users table for eleven minutes",
          "migration locked users table eleven", "why was the accounts store frozen during the schema change?"),
    Probe("log", "the newsletter archive showed issues in reverse order after the redesign",
          "newsletter archive reverse order redesign", "why were past editions listed backwards?"),
    Probe("log", "dark mode made the chart labels invisible",
          "dark mode chart labels invisible", "why couldn't graph captions be read with the night theme?"),
    Probe("log", "the invite emails to team members expired after one hour instead of seven days",
          "invite emails team expired hour", "why did links for adding coworkers stop working so quickly?"),
    Probe("log", "the video embeds autoplayed with sound on every article page",
          "video embeds autoplayed sound", "why did clips start playing loudly by themselves?"),
    Probe("log", "the coupon code SPRING25 could be redeemed unlimited times",
          "coupon spring25 redeemed unlimited", "why could one discount voucher be used again and again?"),
    Probe("log", "the accessibility review found that form fields had no labels for screen readers",
          "accessibility form fields labels screen readers", "why couldn't blind visitors tell what each input "
          "was for?"),
    Probe("close", "the CDN bill tripled because hotlinked images were served to another website",
          "cdn bill tripled hotlinked", "why did our content delivery costs jump threefold?"),
    Probe("close", "the author payouts were delayed because the bank holiday moved the transfer date",
          "author payouts delayed bank holiday", "why did writers get their money late?"),
    Probe("close", "two-factor codes arrived after they had already expired for users in India",
          "two-factor codes expired india", "why couldn't people in Mumbai finish verifying with one-time "
          "passcodes?"),
    Probe("close", "the search index rebuild took the site offline for forty minutes",
          "index rebuild site offline forty minutes", "why was the website unreachable while re-creating "
          "lookup data?"),
    Probe("close", "the free plan allowed unlimited storage because the quota check was commented out",
          "free plan unlimited storage quota", "why could non-paying accounts upload without any limit?"),
    Probe("close", "the holiday sale banner still showed in January",
          "holiday sale banner january", "why was the Christmas promotion visible after New Year?"),
    Probe("lesson", "trusting the vendor's status page hid a four-hour outage of the email relay",
          "vendor status page outage relay", "why shouldn't we rely on a supplier's uptime dashboard?"),
    Probe("lesson", "merging on Friday evening left a broken build over the weekend with nobody watching",
          "merging friday evening broken weekend", "why avoid shipping right before Saturday and Sunday?"),
    Probe("lesson", "copying production data to laptops exposed customer emails when one was stolen",
          "production data laptops stolen", "what went wrong when a notebook computer with live user records "
          "was taken?"),
    Probe("lesson", "the agent rewrote a page the human had hand-tuned, because it never checked the git history",
          "rewrote page hand-tuned git history", "why look at previous commits before editing something a person "
          "adjusted?"),
    Probe("lesson", "estimating the migration at one cycle was wrong by a factor of five",
          "estimating migration cycle factor five", "how badly did we misjudge how long moving the data would "
          "take?"),
    Probe("lesson", "a silent cron failure went unnoticed for nine days because nobody read the job output",
          "silent cron failure unnoticed nine days", "why did a broken scheduled task stay hidden for over a week?"),
    Probe("decision", "should we move comments to a paid add-on for businesses",
          "comments paid add-on businesses", "do we want to charge companies for the discussion feature?"),
    Probe("decision", "switch the mailing provider from SendGrid to Amazon SES to cut costs",
          "mailing provider sendgrid amazon ses", "should outgoing email go through a cheaper service?"),
    Probe("decision", "hire a freelance illustrator for the front page drawings",
          "freelance illustrator front page drawings", "should we pay an outside artist for pictures on the "
          "landing screen?"),
    Probe("decision", "close the forum and point readers to the Discord server",
          "forum discord server", "should the community board be shut down in favor of a chat group?"),
    Probe("decision", "offer a 50% student discount on the yearly subscription",
          "student discount yearly subscription", "should learners at universities get half off the annual "
          "membership?"),
    Probe("decision", "require two-factor login for every editor account",
          "two-factor login editor account", "should all writers have to use a second verification step?"),
    # -- added for issue 24: a set large enough that one question does not move a verdict -------------------
    Probe("log", "the password reset link expired after five minutes because the token lifetime was set in seconds",
          "password reset link expired token lifetime", "why did the account recovery email stop working so fast?"),
    Probe("log", "the Japanese storefront showed prices in dollars since the yen locale file was missing",
          "japanese storefront prices dollars yen", "why did shoppers in Tokyo see American money?"),
    Probe("log", "the podcast feed lost its artwork when the image host renamed the bucket",
          "podcast feed artwork image host bucket", "why did our audio show appear without a cover picture?"),
    Probe("log", "the chatbot answered in French to German visitors because it read the server language",
          "chatbot french german visitors server language",
          "why did the assistant reply to Berliners in the wrong tongue?"),
    Probe("log", "a leap year bug made the renewal job skip every subscription due on February 29",
          "leap year renewal february 29", "which calendar quirk stopped some plans from being extended?"),
    Probe("log", "the mobile app crashed on Android 9 when the camera permission was denied",
          "mobile app crashed android camera permission", "why did the phone program die on older Google handsets?"),
    Probe("log", "search ignored accents, so café and cafe returned different results",
          "search accents café cafe results", "why did diacritics change what the lookup found?"),
    Probe("log", "the referral bonus paid out twice when a friend signed up from two devices",
          "referral bonus paid twice friend devices", "why did inviting a pal earn a double reward?"),
    Probe("log", "the status page stayed green during the outage because its probe hit a cached response",
          "status page green outage probe cached",
          "why did our health dashboard claim all was fine while we were down?"),
    Probe("log", "the bulk import rejected rows with emoji because the column was latin1",
          "bulk import rejected emoji latin1", "why did the mass upload refuse entries containing smileys?"),
    Probe("log", "the affiliate links lost their tracking code when the URL shortener stripped query strings",
          "affiliate links tracking url shortener", "why did partners stop getting credit for sales?"),
    Probe("log", "the dark mode toggle reset on every visit because the preference cookie had no expiry",
          "dark mode toggle reset cookie expiry", "why did the night theme forget itself between sessions?"),
    Probe("log", "the coupon for students worked on the yearly plan only after the discount rule was rewritten",
          "coupon students yearly discount rule", "how did pupils finally get a price cut on the annual offer?"),
    Probe("log", "the video tutorials buffered for Australian viewers until the CDN added a Sydney edge",
          "video tutorials buffered australian cdn sydney", "why were lessons stuttering for people down under?"),
    Probe("log", "the export to Excel cut long product names at 255 characters",
          "export excel product names 255 characters", "why were item titles truncated in spreadsheets?"),
    Probe("log", "the two-factor codes arrived late for Vodafone subscribers because the SMS gateway throttled them",
          "two-factor codes vodafone sms gateway", "why did one carrier's users get their login digits slowly?"),
    Probe("log", "the sales tax for Texas orders was computed with the Ohio rate after the zip lookup failed",
          "sales tax texas ohio rate zip", "why did buyers in one state pay another state's levy?"),
    Probe("log", "the onboarding wizard froze on step three when the company name contained an ampersand",
          "onboarding wizard froze step ampersand", "why did the setup assistant hang for firms with special symbols?"),
    Probe("log", "the weekly digest went out on Sunday at 3 am because the scheduler used UTC",
          "weekly digest sunday scheduler utc", "why did the roundup email arrive in the middle of the night?"),
    Probe("log", "the API returned HTTP 500 instead of 404 for deleted projects",
          "api 500 404 deleted projects", "what error did the interface give for removed workspaces?"),
    Probe("log", "printing an invoice from Safari dropped the company logo",
          "printing invoice safari logo", "why did paper copies of bills lose the brand mark on Apple's browser?"),
    Probe("log", "the trial banner counted days from signup instead of from activation",
          "trial banner days signup activation", "why did the free period notice show the wrong remaining time?"),
    Probe("log", "autocomplete suggested deleted articles because the cache was never purged",
          "autocomplete deleted articles cache purged", "why did type-ahead propose posts we had removed?"),
    Probe("log", "the audit log stored IP addresses in full, which the privacy review flagged",
          "audit log ip addresses privacy review", "what did the data protection check object to?"),
    Probe("log", "the wishlist emptied itself when a shopper logged in on a second browser",
          "wishlist emptied logged second browser", "why did saved favourites vanish after signing on elsewhere?"),
    Probe("log", "the invoice numbers restarted at one on New Year's Day because the counter was per year",
          "invoice numbers restarted new year counter", "why did billing sequence reset in January?"),
    Probe("log", "the map widget showed Lisbon in the Atlantic because latitude and longitude were swapped",
          "map widget lisbon atlantic latitude longitude", "why was the Portuguese capital drawn in the ocean?"),
    Probe("log", "uploads over 100 MB failed silently since the proxy limit was lower than the app limit",
          "uploads 100 mb failed proxy limit", "why did big files never arrive without any error?"),
    Probe("log", "the gift card balance went negative when two orders used it at the same second",
          "gift card balance negative two orders", "how did a present voucher end up owing money?"),
    Probe("log", "screen readers announced the cart icon as 'image 42' until it got an aria label",
          "screen readers cart icon aria label", "what did blind visitors hear for the basket button?"),
    Probe("log", "the Black Friday banner stayed up until March because the end date had a typo",
          "black friday banner march end date typo", "why did the November sale promotion linger into spring?"),
    Probe("log", "the chargeback rate doubled after the statement descriptor changed to our legal name",
          "chargeback rate doubled statement descriptor legal name", "why did disputed card payments rise so much?"),
    Probe("log", "the keyboard shortcut for saving clashed with the browser bookmark shortcut",
          "keyboard shortcut saving browser bookmark", "which hotkey collided with a built-in one?"),
    Probe("log", "the Polish plural forms broke the cart message for two to four items",
          "polish plural forms cart message items", "why was the basket text ungrammatical in Warsaw?"),
    Probe("log", "the robots file blocked the blog after the staging copy was deployed to production",
          "robots file blocked blog staging production", "why did crawlers stop visiting our articles?"),
    Probe("log", "pagination repeated the last result on every page because the sort was not stable",
          "pagination repeated last result sort stable",
          "why did browsing through listings show one entry again and again?"),
    Probe("log", "the Stripe webhook secret rotated and payments stayed pending for six hours",
          "stripe webhook secret rotated payments pending",
          "why were charges stuck awaiting confirmation most of a day?"),
    Probe("log", "the onboarding video autoplayed with sound and users complained on Twitter",
          "onboarding video autoplayed sound twitter", "why were newcomers annoyed by noisy clips on social media?"),
    Probe("log", "the nightly report emailed the whole customer list to one intern by mistake",
          "nightly report emailed customer list intern", "who accidentally received every client's details?"),
    Probe("log", "the font files loaded from a server in Virginia added 400 ms for visitors in India",
          "font files virginia 400 ms india", "why was typography slow for readers in Mumbai?"),
)

SUPERSEDED: tuple[Superseded, ...] = (
    Superseded("the support inbox is answered by Maria on weekdays",
               "the support inbox is now answered by Tomas, replacing Maria",
               "who replies to customer help requests?"),
    Superseded("the blog is hosted on a Hetzner server in Falkenstein",
               "the blog moved from Hetzner to a Scaleway server in Paris",
               "where does the website live, with which provider?"),
    Superseded("editors get paid on the first of each month",
               "editors are now paid every second Friday instead of monthly",
               "when do writers receive their wages?"),
)

NEGATIVES: tuple[str, ...] = (
    "why did the Kubernetes ingress drop gRPC streams?",
    "when did we move the ledger to PostgreSQL 16?",
    "who approved the office lease renewal in Madrid?",
    "what did the penetration tester find in the SDK?",
    "why did the Terraform run destroy the DNS zone?",
    "how many listeners came from the radio partnership?",
    "when did the printing press contract with Heidelberg end?",
    "which GPU did we rent for the image classifier?",
    "why did the Slack bot post every message three times?",
    "what is the parental leave policy for contractors?",
    "why did the barcode scanner reject ISBN numbers?",
    "when did the warehouse in Rotterdam flood?",
    "who designed the booth for the Berlin trade fair?",
    "why did the Excel macro corrupt the payroll sheet?",
    "what did the lawyer say about the trademark dispute with Acme?",
    "which satellite provider handles internet on the ship?",
    "why did the elevator sensors trip the fire alarm?",
    "how did the chess tournament sponsorship go?",
    "when was the fleet of delivery vans electrified?",
    "why did Bluetooth pairing fail on the smartwatch?",
    "what vaccination schedule did the HR team recommend?",
    "who catered the summer party?",
    "why did the solar panels on the roof underperform?",
    "what was the outcome of the customs inspection in Brazil?",
    "why did the brewery delay the tasting event?",
    "which orchestra played at the product launch?",
    "how tall is the antenna on the headquarters roof?",
    "what colour is the office cat?",
)

# In the agent's own domain (billing, newsletters, deploys, search, onboarding...: the synthetic history's
# topics), about things that were never written: the hard case, since ordinary entries share their words.
IN_DOMAIN_NEGATIVES: tuple[str, ...] = (
    "why did the refund for annual plans take two weeks?",
    "when did we drop the free tier of the newsletter?",
    "why did the canary release roll back on Tuesday?",
    "which search synonym list did we import from the old site?",
    "why did the welcome tour skip the billing step?",
    "how many subscribers unsubscribed after the redesign?",
    "why did the webhook retries flood the partner's endpoint?",
    "what did the cohort analysis say about churn in March?",
    "why did the support macro send the wrong apology?",
    "when did the invoice template switch to landscape?",
    "why was the checkout coupon field hidden on tablets?",
    "who asked for the changelog to move to a separate page?",
    "why did the deploy pipeline need a manual approval?",
    "what was the conversion rate of the spring pricing experiment?",
    "why did the API version header break the mobile client?",
    "which translation vendor handled the Korean locale?",
    "why did the quickstart guide tell people to use an old token?",
    "when did the seat-based plan get a volume discount?",
    "why did the dashboard show yesterday's signups twice?",
    "what was the timeout of the healthcheck before we raised it?",
    "why did the ticket escalation skip the night shift?",
    "how did the offline mode lose drafts on the phone?",
    "why did the CSRF header fail behind the load balancer?",
    "which headline won the subject line test for the digest?",
)

NEUTRAL_TITLES = ("Check before acting", "Read before writing", "Measure first", "Ask earlier",
                  "Slow down", "Look twice")


def half(position: int) -> int:
    """0 for the calibration half, 1 for the held-out half: alternate items, so both halves span every kind."""
    return position % 2


# -- checks ----------------------------------------------------------------------------------------------------

def stems(conn, text: str) -> set[str]:
    """Content-word stems of `text` as the recall index sees them (porter, folded), stop words left out."""
    from gitmem.recall.query import STOPWORDS, WORD_RE, fold_for_search
    from gitmem.recall.query import stems as index_stems

    words = [word for word in WORD_RE.findall(fold_for_search(text)) if word not in STOPWORDS and len(word) > 1]
    return set(index_stems(conn, words).values())


def shared_stems(conn, fact: str, question: str) -> set[str]:
    return stems(conn, fact) & stems(conn, question)


# -- planting --------------------------------------------------------------------------------------------------

@dataclass
class Planted:
    """Where each probe ended up: (kind, ident) as recall reports hits."""

    probes: list[tuple[str, str]] = field(default_factory=list)
    superseded: list[tuple[tuple[str, str], tuple[str, str]]] = field(default_factory=list)


_HEADING = re.compile(r"^## (.+?) · (?:cycle (\d+) · \S+|close)$")


def _entries(lines: list[str]) -> list[tuple[int, int | None]]:
    """(line index, cycle number or None for a close) of every LOG entry heading."""
    found = []
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match:
            found.append((index, int(match.group(2)) if match.group(2) else None))
    return found


def _field(lines: list[str], start: int, key: str) -> tuple[int, int]:
    """Indexes of the first and last line of field `key` in the entry whose heading is at `start`."""
    index = start + 1
    while index < len(lines) and not lines[index].startswith("## "):
        if lines[index].startswith(f"- {key}:"):
            end = index
            while end + 1 < len(lines) and lines[end + 1].startswith("  "):
                end += 1
            return index, end
        index += 1
    raise ValueError(f"no {key} field in the entry at line {start + 1}")


def plant(root: Path, taken_cycles: set[int], seed: int = 14) -> Planted:
    """Plant every probe and superseded pair in the work tree at `root`; avoid entries in `taken_cycles`."""
    from gitmem.config import load_config
    from gitmem.memory import log as logfile
    from gitmem.memory_writer import MemoryWriter
    from gitmem.workspace import Workspace
    from tests.support.synth.text import TextGen

    rng = random.Random(seed)
    filler = TextGen(random.Random(seed + 1))
    config = load_config(root)
    path = root / config.path("log")
    lines = path.read_text(encoding="utf-8").split("\n")
    heads = _entries(lines)
    cycles = [(index, cycle) for index, cycle in heads if cycle is not None and cycle not in taken_cycles]
    closes = [(index, cycle) for index, cycle in heads if cycle is None]
    planted = Planted()
    inserts: dict[int, list[str]] = {}           # line index -> lines to insert after it
    log_probes = [probe for probe in PROBES if probe.kind == "log"]
    slots = len(log_probes) + 2 * len(SUPERSEDED)
    chosen = [cycles[min(len(cycles) - 1, int((n + 0.5) * len(cycles) / slots))] for n in range(slots)]
    where: dict[int, tuple[str, str]] = {}          # probe index -> (kind, ident)

    def put(entry: tuple[int, int | None], text: str) -> tuple[str, str]:
        start, cycle = entry
        first, last = _field(lines, start, "Evidence")
        inserts.setdefault(rng.randrange(first, last + 1), []).append(f"  {text}")
        return "log", f"cycle {cycle}"

    # Superseded pairs: the old fact early (about 15% into history), its replacement late (about 85%).
    early = [entry for entry in chosen if entry[0] < len(lines) * 0.5]
    late = [entry for entry in chosen if entry[0] >= len(lines) * 0.5]
    pair_slots = [(early[n], late[-1 - n]) for n in range(len(SUPERSEDED))]
    rest = [entry for entry in chosen if entry not in {slot for pair in pair_slots for slot in pair}]
    for pair, (old_at, new_at) in zip(SUPERSEDED, pair_slots, strict=True):
        planted.superseded.append((put(old_at, pair.old), put(new_at, pair.new)))
    for n, probe in enumerate(log_probes):
        where[PROBES.index(probe)] = put(rest[n], probe.fact)
    close_probes = [probe for probe in PROBES if probe.kind == "close"]
    for n, probe in enumerate(close_probes):
        start, _ = closes[min(len(closes) - 1, int((n + 0.5) * len(closes) / len(close_probes)))]
        _, end = _field(lines, start, "Done")
        topic = filler.topic()
        inserts.setdefault(end, []).extend([f"  {filler.line(topic)}" for _ in range(38)] + [f"  {probe.fact}"])
    out: list[str] = []
    for index, line in enumerate(lines):
        out.append(line)
        out.extend(inserts.get(index, ()))
    path.write_text("\n".join(out), encoding="utf-8")
    # Close entries are all "close": tell them apart by their line, which recall reports.
    close_lines = _close_lines(out, [probe.fact for probe in close_probes])
    for probe, line in zip(close_probes, close_lines, strict=True):
        where[PROBES.index(probe)] = ("log", f"close@{line}")

    last = logfile.tail(path.read_text(encoding="utf-8"), 1).entries[-1].when.moment
    moments = iter(last + timedelta(minutes=5 * n) for n in range(1, 1000))
    memory = MemoryWriter(Workspace.at(root, config), clock=lambda: next(moments))
    titles = iter(NEUTRAL_TITLES)
    for index, probe in enumerate(PROBES):
        if probe.kind == "lesson":
            topic = filler.topic()
            item = memory.add_lesson(title=next(titles), happened=probe.fact, why=filler.line(topic),
                                     change=filler.line(topic))
            where[index] = ("lesson", item.id)
        elif probe.kind == "decision":
            item = memory.ask_decision(title=probe.fact, recommendation="yes, after a trial month")
            where[index] = ("decision", item.id)
    planted.probes = [where[index] for index in range(len(PROBES))]
    return planted


def _close_lines(lines: list[str], facts: list[str]) -> list[int]:
    """The 1-based heading line of the close entry holding each fact."""
    found = []
    for fact in facts:
        index = lines.index(f"  {fact}")
        while not lines[index].startswith("## "):
            index -= 1
        found.append(index + 1)
    return found
