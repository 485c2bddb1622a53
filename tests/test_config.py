import tomllib

import pytest

from qa_service.config import Settings, describe, load_settings
from qa_service.errors import ConfigError
from tests.conftest import ROOT


def test_default_toml_lists_every_setting_with_the_code_defaults():
    data = tomllib.loads((ROOT / "config" / "default.toml").read_text(encoding="utf-8"))
    documented = {name: default for name, default, _ in describe() if name not in ("openai_api_key", "api_key")}
    assert data == documented
    assert all(description for _, _, description in describe())


def test_environment_overrides_file(tmp_path):
    settings = load_settings(ROOT / "config" / "default.toml", env={"QA_DATA_DIR": str(tmp_path), "QA_RETRIEVAL_K": "7", "OPENAI_API_KEY": "sk-test", "QA_MODEL": "m"})
    assert (settings.data_dir, settings.retrieval_k, settings.openai_api_key, settings.model) == (str(tmp_path), 7, "sk-test", "m")


def test_bad_values_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="QA_RETRIEVAL_K.*must be int"):
        load_settings(env={"QA_RETRIEVAL_K": "many"})
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 'blue'\n")
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load_settings(bad, env={})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", env={})


def test_settings_without_a_file_are_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={}) == Settings()


def test_readme_documents_every_setting():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, _, _ in describe():
        assert f"`{name}`" in readme and f"QA_{name.upper()}" in readme, name


def test_the_package_default_file_is_read_from_any_directory(tmp_path, monkeypatch):
    """Settings resolve from the installed package's file, then QA_CONFIG, then QA_*; not from the working directory."""
    from qa_service.config import default_config_path

    monkeypatch.chdir(tmp_path)
    assert default_config_path() is not None and default_config_path().is_file()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "default.toml").write_text("retrieval_k = 99\n")  # a stray file in the cwd is not ours
    overlay = tmp_path / "mine.toml"
    overlay.write_text("retrieval_k = 9\n")
    assert load_settings(env={}).retrieval_k == Settings().retrieval_k
    assert load_settings(env={"QA_CONFIG": str(overlay)}).retrieval_k == 9
    assert load_settings(env={"QA_CONFIG": str(overlay), "QA_RETRIEVAL_K": "4"}).retrieval_k == 4
