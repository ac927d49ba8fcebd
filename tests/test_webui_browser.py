"""The web UI in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, Selenium)
against a real uvicorn server on 127.0.0.1 over a GraphRAG built with the scripted fakes.

Upload a file, see it PROCESSED, find an entity in the graph explorer and open its source chunk,
ask a question and read the streamed answer and its references; all with an API key entered in
the UI. ``LIGHTRAG_SCREENSHOTS=docs/img`` also saves a screenshot of each page (docs/webui.md).
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("selenium")

from graph_fakes import extraction_reply  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from lightrag.components.graph_rag import Chunker, EntityExtractor, GraphRAG  # noqa: E402
from lightrag.components.model_client import ScriptedClient  # noqa: E402
from lightrag.core import Embedder, Generator  # noqa: E402
from lightrag.server.app import create_app  # noqa: E402
from lightrag.server.runner import BackgroundServer  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER),
    reason="needs Debian's chromium and chromium-driver (make install-test installs them)")

KEY = "ui-test-key"
VOYAGER = ("NASA launched Voyager 1 in 1977. Voyager 1 flew past Jupiter and Saturn. "
           "Voyager 1 photographed Titan, the largest moon of Saturn. "
           "The Cassini mission of NASA reached Saturn in 2004. The Huygens probe landed on Titan.")
CASSINI = ("# Cassini\n\nThe Cassini orbiter studied Saturn for thirteen years. Cassini found plumes "
           "on Enceladus. The Huygens probe of ESA landed on Titan in 2005. Titan has lakes of "
           "methane.")
ANSWER = "Voyager 1 photographed Titan, the largest moon of Saturn [1]."


def voyager_answer(prompt: str) -> str:
    return ANSWER


def make_rag(path, workspace=""):
    return GraphRAG(
        embedder=Embedder(model_client=ScriptedClient(embedding_dim=256)),
        extractor=EntityExtractor(generator=Generator(
            model_client=ScriptedClient(response_fn=extraction_reply)), max_gleaning=0),
        answer_generator=Generator(model_client=ScriptedClient(response_fn=voyager_answer)),
        chunker=Chunker(chunk_token_size=40, chunk_overlap_token_size=5),
        working_dir=str(path), workspace=workspace, cosine_threshold=0.05)


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1400,900"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def shot(driver, name):
    target = os.environ.get("LIGHTRAG_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(target) / f"webui-{name}.png"))


def test_upload_explore_and_query_in_a_real_browser(browser, tmp_path):
    upload = tmp_path / "voyager.md"
    upload.write_text(VOYAGER)
    (tmp_path / "cassini.md").write_text(CASSINI)
    server = BackgroundServer(create_app(make_rag(tmp_path / "store"), api_keys=[KEY])).start()
    wait = WebDriverWait(browser, 20)
    try:
        browser.get(server.url + "/")
        # without the key the API answers 401 and the UI says so
        banner = wait.until(ec.visibility_of_element_located((By.ID, "banner")))
        wait.until(lambda d: "API key" in banner.text)
        browser.find_element(By.ID, "api-key").send_keys(KEY)
        browser.find_element(By.ID, "save-key").click()
        assert browser.execute_script("return localStorage.getItem('lightrag.apiKey')") == KEY

        # Documents: upload, then the row turns processed
        browser.find_element(By.ID, "file-input").send_keys(f"{upload}\n{tmp_path / 'cassini.md'}")
        browser.find_element(By.ID, "upload-button").click()
        wait.until(lambda d: "2 processed" in d.find_element(By.ID, "doc-counts").text)
        rows = browser.find_elements(By.CSS_SELECTOR, "#doc-table tr[data-status='processed']")
        assert sorted(r.text.split()[0] for r in rows) == ["cassini.md", "voyager.md"]
        shot(browser, "documents")
        Select(browser.find_element(By.ID, "status-filter")).select_by_visible_text("failed")
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#doc-table tr[data-status]"))
        Select(browser.find_element(By.ID, "status-filter")).select_by_visible_text("all")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#doc-table tr[data-status]")) == 2)

        # Graph explorer: search, expand, details, open a source chunk
        browser.find_element(By.ID, "tab-graph").click()
        browser.find_element(By.ID, "graph-search").send_keys("voyag")
        wait.until(ec.element_to_be_clickable(
            (By.CSS_SELECTOR, "#search-results li[data-name='Voyager 1']"))).click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "entity-name"), "Voyager 1"))
        detail = browser.find_element(By.ID, "entity-detail")
        wait.until(lambda d: "Jupiter" in detail.text and "photographed Titan" in detail.text)
        nodes = browser.execute_script("return state.cy.nodes().map(n => n.id())")
        assert {"Voyager 1", "NASA", "Jupiter", "Titan"} <= set(nodes)
        detail.find_element(By.XPATH, ".//ul[@class='neighbours']//span[text()='Titan']").click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "entity-name"), "Titan"))
        wait.until(lambda d: "Huygens" in d.execute_script("return state.cy.nodes().map(n => n.id())"))
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".source-chunks li")) == 4)
        shot(browser, "graph")
        detail.find_element(By.CSS_SELECTOR, ".source-chunks .chunk-link").click()
        dialog = wait.until(ec.visibility_of_element_located((By.ID, "chunk-dialog")))
        wait.until(lambda d: "Titan" in d.find_element(By.ID, "chunk-content").text)
        assert ".md" in dialog.find_element(By.ID, "chunk-title").text
        browser.find_element(By.ID, "chunk-close").click()

        # Query playground: streamed answer and references that open their chunk
        browser.find_element(By.ID, "tab-query").click()
        modes = [o.text for o in Select(browser.find_element(By.ID, "mode-select")).options]
        assert {"naive", "local", "global", "hybrid", "mix"} <= set(modes)
        Select(browser.find_element(By.ID, "mode-select")).select_by_visible_text("local")
        browser.find_element(By.ID, "query-input").send_keys("Which moon did Voyager 1 photograph?")
        browser.find_element(By.ID, "ask-button").click()
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#answer[data-done='true']")))
        assert browser.find_element(By.ID, "answer").text == ANSWER
        reference = wait.until(ec.presence_of_element_located(
            (By.CSS_SELECTOR, "#references li[data-reference]")))
        assert "voyager.md" in reference.text
        shot(browser, "query")
        reference.find_element(By.CSS_SELECTOR, ".chunk-link").click()
        wait.until(ec.visibility_of_element_located((By.ID, "chunk-dialog")))
        wait.until(lambda d: "Voyager 1" in d.find_element(By.ID, "chunk-content").text)
        browser.find_element(By.ID, "chunk-close").click()
        errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"
                  and "401 (Unauthorized)" not in e["message"]]  # the calls made before the key
        assert not errors, errors

        # the offline API docs render from the vendored assets
        for page in ("/docs", "/redoc"):  # with API keys set, the API's docs need a key too
            browser.get(server.url + page)
            wait.until(lambda d: "key" in d.find_element(By.TAG_NAME, "body").text.lower())
            assert "swagger-ui" not in browser.page_source
    finally:
        server.stop()


def test_workspace_switch_sets_the_header_on_every_call_and_persists(browser, tmp_path):
    import httpx

    store = tmp_path / "store"
    app = create_app(make_rag(store), api_keys=[],
                     workspace_factory=lambda name: make_rag(store, workspace=name))
    server = BackgroundServer(app).start()
    wait = WebDriverWait(browser, 20)
    rows = (By.CSS_SELECTOR, "#doc-table tr[data-status]")
    try:
        httpx.post(server.url + "/documents", json={"texts": VOYAGER, "file_paths": "voyager.md",
                                                     "wait": True}, timeout=30)
        browser.get(server.url + "/")
        wait.until(lambda d: len(d.find_elements(*rows)) == 1)
        box = browser.find_element(By.ID, "workspace")
        box.send_keys("team_a")
        browser.find_element(By.ID, "use-workspace").click()
        wait.until(lambda d: not d.find_elements(*rows))
        assert browser.execute_script("return localStorage.getItem('lightrag.workspace')") == "team_a"

        browser.find_element(By.CSS_SELECTOR, "details.paste summary").click()
        browser.find_element(By.ID, "paste-name").send_keys("cassini.md")
        browser.find_element(By.ID, "paste-text").send_keys(CASSINI)
        browser.find_element(By.ID, "paste-button").click()
        wait.until(lambda d: len(d.find_elements(*rows)) == 1)
        listing = httpx.get(server.url + "/documents", headers={"LIGHTRAG-WORKSPACE": "team_a"}).json()
        assert [d["file_path"] for d in listing["documents"]] == ["cassini.md"]
        assert httpx.get(server.url + "/documents").json()["total"] == 1  # the default: voyager only

        browser.refresh()  # the choice survives a reload
        wait.until(lambda d: d.find_element(By.ID, "workspace").get_attribute("value") == "team_a")
        wait.until(lambda d: "cassini.md" in d.find_element(By.ID, "doc-table").text)
        browser.find_element(By.ID, "tab-graph").click()
        browser.find_element(By.ID, "graph-search").send_keys("Encel")
        wait.until(ec.presence_of_element_located(
            (By.CSS_SELECTOR, "#search-results li[data-name='Enceladus']")))
        options = browser.execute_script(
            "return [...document.querySelectorAll('#workspace-list option')].map(o => o.value)")
        assert set(options) == {"default", "team_a"}

        browser.find_element(By.ID, "tab-documents").click()
        box = browser.find_element(By.ID, "workspace")
        box.clear()
        browser.find_element(By.ID, "use-workspace").click()
        wait.until(lambda d: "voyager.md" in d.find_element(By.ID, "doc-table").text)
        assert browser.execute_script("return localStorage.getItem('lightrag.workspace')") is None
        errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        server.stop()
