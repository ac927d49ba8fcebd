"""Answers on passages shaped like a product's documentation (benchmarks/data/product_kb): release
notes whose version and date stand only in the section heading ("## Version 4.1, released 23 May
2023"), a pricing page whose prices are headings over bullet lists. Each test failed before:
no heading was ever quoted, so these facts were never given (or another section's were)."""

from quoted_answers import answer

RELEASES = ("Quillmate release notes\n\n## Version 4.0, released 17 January 2023\n\nQuillmate 4.0 is "
            "a major release. It replaces Auto-Sort with Smart Folders.\n\n## 5.0 — March 5, 2024\n\n"
            "With version 5 Quillmate becomes a collaborative editor.\n\n## 5.1 — August 20, 2024\n\n"
            "Quillmate 5.1 adds single sign-on through SAML 2.0.\n\n## 3.2.1 (2021-10-02)\n\nA patch "
            "release. It fixes a crash when importing EPUB files larger than 200 MB.")
PRICING = ("Plans and pricing\n\n## Plus — €6 a month\n\n- 50 GB of storage\n- Smart Folders\n\n"
           "## Pro — €11 a month\n\n- 200 GB of storage\n- Précis summaries\n\n"
           "## Studio — €18 per user per month\n\n- Everything in Pro, plus an admin console")


def test_a_release_date_in_the_heading_is_quoted():
    assert "17 January 2023" in answer("When was Quillmate 4.0 released?", RELEASES)


def test_another_versions_heading_does_not_answer():
    text = answer("When did Quillmate 5.0 come out?", RELEASES)
    assert "March 5, 2024" in text and "August 20, 2024" not in text


def test_which_release_is_answered_by_the_heading_over_the_fix():
    assert "3.2.1" in answer("Which release fixed the crash when importing large EPUB files?", RELEASES)


def test_a_price_in_the_heading_answers_for_its_plan_only():
    text = answer("How much is the Plus plan per month?", PRICING)
    assert "€6" in text and "€11" not in text


def test_a_price_answers_how_much_something_costs():
    text = answer("How much does the Studio plan cost?", PRICING)
    assert "€18" in text and "does not mention" not in text


GUIDE = ("Troubleshooting\n\n## Search finds nothing\n\nThe search index has probably fallen out of "
         "date. Quit Quillmate and rebuild it from a terminal:\n\n```\nquillmate --reindex\n```\n\n"
         "## Migrating\n\nInstall Quillmate 5 and run:\n\n```\nquillmate migrate --from 4\n```\n\n"
         "The tool converts the vault in place. It takes about ten minutes per 10,000 notes.")


def test_a_line_ending_with_a_colon_is_quoted_with_the_command_after_it():
    assert "`quillmate --reindex`" in answer("How do I rebuild the search index?", GUIDE)


def test_a_quote_going_on_from_a_command_brings_the_command():
    text = answer("How do I convert my vault from Quillmate 4 to Quillmate 5?", GUIDE)
    assert "quillmate migrate --from 4" in text


TEAM = ("About Marrowfield Software\n\nMarrowfield Software was founded in 2016 by Ilse Vandermolen "
        "and Tomas Okonkwo-Reyes.\n\n## Team\n\n- Ilse Vandermolen, chief executive officer\n"
        "- Tomas Okonkwo-Reyes, chief technology officer")


def test_another_officer_does_not_answer_for_the_one_asked():
    """"Who is the chief financial officer ...?" offered the chief executive officer."""
    text = answer("Who is the chief financial officer of Marrowfield Software?", TEAM)
    assert text.startswith('The retrieved context does not mention "chief financial officer"')
    cto = answer("Who is the chief technology officer of Marrowfield Software?", TEAM)
    assert "Tomas Okonkwo-Reyes" in cto


def test_a_numbered_sections_number_counts_nothing():
    guide = ("Migration guide\n\n## 4. Run the migration\n\nRun the tool from a terminal. The tool "
             "converts the vault in place.")
    assert "4. Run the migration" not in answer("How many steps does the migration have?", guide)


TIDEPOOL = ("Tidepool deprecation\n\nTidepool, the sync engine of Quillmate 1.0 to 3.x, was "
            "deprecated in 4.0. Clients older than 4.0 could keep using it for a while, but its "
            "servers were shut down on 31 December 2024.")
SETTINGS = ("Configuration reference\n\nSetting: sync.port; Default: 47120; Description: TCP port "
            "used to reach a self-hosted Relay Sync server.\nSetting: sync.retry_limit; Default: 5 "
            "attempts; Description: How many times a failed sync is retried.")


def test_another_things_setting_does_not_answer_for_this_one():
    """"What was the default port of the old Tidepool sync?" quoted Relay Sync's port row."""
    text = answer("What was the default port of the old Tidepool sync?", TIDEPOOL, SETTINGS)
    assert text.startswith('The retrieved context does not mention "port" for Tidepool')
    relay = answer("What is the default port of Relay Sync?", TIDEPOOL, SETTINGS)
    assert relay.startswith("Setting: sync.port")
