"""POST /api/v1/quotes/import-catalog and /quotes/import-catalog/: SkyPilot and gpuhunt catalogs
imported as a whole, re-imports updating in place, bad files saving nothing."""

from datetime import date
from decimal import Decimal
from pathlib import Path
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.core.roles import Role
from apps.quotes.models import Quote
from tests.factories.briefs import BriefFactory
from tests.factories.core import TeamFactory
from tests.factories.quotes import ProviderFactory
from tests.factories.quotes_extra import gpu_catalog_create

DATA = Path(__file__).resolve().parents[1] / "data" / "catalogs"
URL = "/api/v1/quotes/import-catalog"
PAGE = "/quotes/import-catalog/"
RECOMPUTE = "apps.quotes.catalog_import.candidate_tables_request_recompute"
P5_SPOT = "skypilot:p5.48xlarge:h100-sxm5-80gb:us-east-1:SPOT"
P5 = "skypilot:p5.48xlarge:h100-sxm5-80gb:us-east-1:ON_DEMAND"
AWS_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
    "Region,AvailabilityZone"
)


@pytest.fixture
def catalog(db):
    """The catalog's slugs are enough here (no costing)."""
    gpu_catalog_create()


@pytest.fixture
def api(catalog, token_client):
    return token_client(Role.PROCUREMENT)


@pytest.fixture
def aws(db):
    return ProviderFactory(name="Amazon Web Services")


def fixture_file(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (DATA / name).read_bytes(), content_type="text/csv")


def post(api, file, *, provider, fmt="skypilot", **extra):
    body = {"file": file, "provider": str(provider), "format": fmt, **extra}
    return api.post(URL, body, format="multipart")


def text_file(text: str, name="vms.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


def prices():
    return dict(
        Quote.objects.values_list("import_key", "hourly_price_per_gpu").order_by("import_key")
    )


class TestImportSkyPilot:
    def test_imports_one_quote_per_instance_type_region_and_term(self, api, aws):
        response = post(
            api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk, fetched_date="2026-11-28"
        )
        assert response.status_code == 201, response.content
        body = response.json()
        assert (body["created"], body["updated"], body["unchanged"], body["rows"]) == (17, 0, 0, 15)
        assert body["unknown_accelerators"] == []
        assert (body["skipped"], body["skipped_rows"]) == (
            [{"name": "L4", "reason": "a fractional GPU (a slice of one), not a GPU quote",
              "rows": 1, "first_row": 7}],
            1,
        )  # fmt: skip
        one = next(q for q in body["quotes"] if q["instance"] == "p5.4xlarge")
        assert (one["gpu"], one["gpus_per_node"], one["hourly_price_per_gpu"]) == (
            "h100-sxm5-80gb", 1, "6.8800",
        )  # fmt: skip
        quote = Quote.objects.get(import_key=P5_SPOT)
        assert quote.hourly_price_per_gpu == Decimal("2.6648")
        assert (quote.provider, quote.gpus_per_node, quote.currency) == (aws, 8, "USD")
        assert quote.quote_date == quote.fetched_date == date(2026, 11, 28)
        assert quote.created_by == api.user
        assert "'skypilot_aws_vms.csv'" in quote.source
        assert "p5.48xlarge" in quote.source and "use1-az4" in quote.source

    def test_the_quote_api_answers_each_quotes_import_key_and_fetch_date(self, api, aws):
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk, fetched_date="2026-11-28")
        quote = Quote.objects.get(import_key=P5_SPOT)

        body = api.get(f"/api/v1/quotes/{quote.pk}/").json()

        assert body["import_key"] == "skypilot:p5.48xlarge:h100-sxm5-80gb:us-east-1:SPOT"
        assert body["fetched_date"] == "2026-11-28"

    def test_the_gcp_column_order_and_host_vms(self, api, aws):
        response = post(api, fixture_file("skypilot_gcp_vms.csv"), provider=aws.pk)
        assert response.status_code == 201, response.content
        h100 = Quote.objects.get(
            import_key="skypilot:H100 x 8:h100-sxm5-80gb:us-central1:ON_DEMAND"
        )
        assert h100.hourly_price_per_gpu == Decimal("11.0319")
        assert h100.fetched_date is not None

    def test_provider_by_name_ignoring_case(self, api, aws):
        response = post(api, fixture_file("skypilot_aws_vms.csv"), provider="amazon WEB services")
        assert response.status_code == 201, response.content
        assert response.json()["provider"] == aws.pk


class TestImportGpuhunt:
    def test_imports_and_lists_what_it_could_not_map(self, api):
        lambda_labs = ProviderFactory(name="Lambda")
        response = post(
            api, fixture_file("gpuhunt_lambdalabs.csv"), provider=lambda_labs.pk, fmt="gpuhunt"
        )
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["created"] == 9
        assert body["unknown_accelerators"] == []
        ambiguous = [s for s in body["skipped"] if s["name"] == "A100"]
        assert ambiguous[0]["first_row"] == 3 and "could be" in ambiguous[0]["reason"]


class TestReimport:
    def test_the_same_file_again_changes_nothing(self, api, aws):
        assert post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk).status_code == 201
        before = prices()
        with mock.patch(RECOMPUTE) as recompute:
            response = post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        assert response.status_code == 201
        assert (response.json()["created"], response.json()["unchanged"]) == (0, 17)
        assert prices() == before
        recompute.assert_not_called()

    def test_a_new_price_updates_the_quote_in_place_and_recomputes_once(self, api, aws):
        text = (DATA / "skypilot_aws_vms.csv").read_text()
        assert post(api, text_file(text), provider=aws.pk).status_code == 201
        old = Quote.objects.get(import_key=P5)
        cheaper = text.replace(",55.04,24.681900,us-east-1", ",49.60,24.681900,us-east-1")
        with mock.patch(RECOMPUTE, return_value=[1, 2]) as recompute:
            response = post(api, text_file(cheaper), provider=aws.pk)
        assert response.status_code == 201, response.content
        body = response.json()
        assert (body["created"], body["updated"], body["unchanged"]) == (0, 1, 16)
        assert body["briefs_queued"] == 2
        recompute.assert_called_once_with(quotes_only=True)
        new = Quote.objects.get(import_key=P5)
        # use1-az2 at 49.60 is now the cheapest on-demand zone (az4 stays 55.04): 6.20 a GPU.
        assert (new.pk, new.hourly_price_per_gpu, new.version) == (
            old.pk, Decimal("6.2000"), old.version + 1,
        )  # fmt: skip
        assert Quote.objects.count() == 17

    def test_a_newer_fetch_date_re_dates_without_a_new_version(self, api, aws):
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk, fetched_date="2026-11-01")
        response = post(
            api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk, fetched_date="2026-11-29"
        )
        assert response.json()["refreshed"] == 17
        assert set(Quote.objects.values_list("quote_date", "version")) == {(date(2026, 11, 29), 1)}

    def test_another_provider_gets_its_own_quotes(self, api, aws):
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        other = ProviderFactory(name="Reseller")
        assert (
            post(api, fixture_file("skypilot_aws_vms.csv"), provider=other.pk).json()["created"]
            == 17
        )
        assert Quote.objects.count() == 34

    def test_a_retired_quote_is_not_revived_but_replaced(self, api, aws):
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        key = "skypilot:p5.48xlarge:h100-sxm5-80gb:us-east-1:ON_DEMAND"
        Quote.objects.filter(import_key=key).update(retired=True)
        body = post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk).json()
        assert body["created"] == 1
        assert Quote.objects.filter(import_key=key).count() == 2

    def test_a_quote_confidential_to_another_team_is_not_changed_nor_in_the_way(self, api, aws):
        """Issue 24 point 3: the import creates its own quote beside another team's
        confidential one of the same key, and answers as if that quote did not exist."""
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        key = "skypilot:p5.48xlarge:h100-sxm5-80gb:us-east-1:ON_DEMAND"
        elsewhere = TeamFactory(slug="elsewhere")
        Quote.objects.filter(import_key=key).update(confidential_to=elsewhere)
        cheaper = (DATA / "skypilot_aws_vms.csv").read_text().replace(",55.04,", ",49.60,")
        response = post(api, text_file(cheaper), provider=aws.pk)
        assert response.status_code == 201, response.content
        assert response.json()["created"] == 1
        theirs = Quote.objects.get(import_key=key, confidential_to=elsewhere)
        assert theirs.hourly_price_per_gpu == Decimal("6.8800")
        ours = Quote.objects.get(import_key=key, confidential_to__isnull=True, retired=False)
        assert ours.hourly_price_per_gpu == Decimal("6.2000")
        assert "elsewhere" not in response.content.decode()

    def test_another_teams_public_quote_stays_as_that_team_entered_it(
        self, api, aws, token_client, make_user, other_team
    ):
        """Issue 24 point 3: only the creating team updates a quote, the catalog import too;
        the other team's rows of it are skipped and reported."""
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        theirs = Quote.objects.get(import_key=P5, retired=False)
        other = token_client(user=make_user(Role.PROCUREMENT, teams=[other_team]))
        cheaper = (DATA / "skypilot_aws_vms.csv").read_text().replace(",55.04,", ",49.60,")
        response = post(other, text_file(cheaper), provider=aws.pk)
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["updated"] == 0 and body["created"] == 0
        assert any(f"#{theirs.pk}" in s["reason"] for s in body["skipped"]), body["skipped"]
        theirs.refresh_from_db()
        assert theirs.hourly_price_per_gpu == Decimal("6.8800")
        assert Quote.objects.filter(import_key=P5, retired=False).count() == 1
        # The team that entered it still updates it.
        assert post(api, text_file(cheaper), provider=aws.pk).json()["updated"] >= 1
        theirs.refresh_from_db()
        assert theirs.hourly_price_per_gpu == Decimal("6.2000")


class TestRecompute:
    def test_one_coalesced_recompute_per_brief_for_a_whole_file(
        self, api, aws, team, django_capture_on_commit_callbacks
    ):
        briefs = {BriefFactory(team=team).pk for _ in range(3)}
        sent: list[list[int]] = []
        with (
            mock.patch("apps.finance.services._send_all", side_effect=sent.append),
            django_capture_on_commit_callbacks(execute=True),
        ):
            response = post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        assert response.status_code == 201
        assert response.json()["briefs_queued"] == 3
        # 17 quotes created, and each brief's table asked for once, in one send.
        assert [sorted(ids) for ids in sent] == [sorted(briefs)]


MiB = 2**20
GPU_INFO = (
    "{'Gpus': [{'Name': 'H100', 'Manufacturer': 'NVIDIA', 'Count': 8, 'MemoryInfo': "
    "{'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 655360}"
)


def catalog_of_size(size: int) -> str:
    """A SkyPilot vms.csv of at least ``size`` bytes: H100 rows over 4 regions, one zone each."""
    rows, length, zone = [AWS_HEADER], len(AWS_HEADER) + 1, 0
    while length < size:
        spot = f"{20 + zone % 1000 / 100:.2f}"
        where = f"us-east-{zone % 4},use1-az{zone}"
        row = f'p5.48xlarge,H100,8.0,192.0,2048.0,"{GPU_INFO}",55.04,{spot},{where}'
        rows.append(row)
        length += len(row) + 1
        zone += 1
    return "\n".join(rows) + "\n"


class TestSizeLimit:
    """The catalog import has its own limit (settings.QUOTE_CATALOG_MAX_BYTES, 20 MiB): larger
    than the 5 MiB any other form or JSON body may be, as whole clouds' catalogs are."""

    def test_a_6_mib_catalog_is_imported(self, api, aws):
        text = catalog_of_size(6 * MiB)
        assert 6 * MiB <= len(text) < 6.1 * MiB

        response = post(api, text_file(text), provider=aws.pk)

        assert response.status_code == 201, response.content[:500]
        body = response.json()
        assert body["rows"] == text.count("\n") - 1
        assert (body["created"], Quote.objects.count()) == (8, 8)  # 4 regions x on demand, spot

    def test_the_page_takes_a_6_mib_catalog_too(self, catalog, client, make_user, aws):
        client.force_login(make_user(Role.PROCUREMENT))
        response = client.post(
            PAGE,
            {"file": text_file(catalog_of_size(6 * MiB)), "provider": aws.pk,
             "format": "skypilot"},
        )  # fmt: skip
        assert response.status_code == 200
        assert "8 quotes added" in response.content.decode()

    def test_a_file_one_byte_over_20_mib_is_a_400_on_the_file_field(self, api, aws):
        response = post(api, text_file("x" * (20 * MiB + 1)), provider=aws.pk)

        assert response.status_code == 400
        assert response.json()["errors"]["file"] == ["larger than 20 MB: split the file by region"]
        assert Quote.objects.count() == 0

    def test_a_body_well_over_20_mib_is_a_413_before_it_is_read(self, api, aws):
        response = post(api, text_file("x" * (21 * MiB)), provider=aws.pk)

        assert response.status_code == 413
        assert (
            f"limit for this address is {20 * MiB + 64 * 1024:,} bytes"
            in (response.json()["detail"])
        )
        assert Quote.objects.count() == 0

    def test_the_form_names_the_limit(self, catalog, client, make_user):
        client.force_login(make_user(Role.PROCUREMENT))
        assert "(up to 20 MB)" in client.get(PAGE).content.decode()


class TestRefusals:
    def test_a_file_over_the_limit_is_refused_unread(self, api, aws):
        with mock.patch("apps.quotes.catalog_import.MAX_CATALOG_BYTES", 100):
            response = post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        assert response.status_code == 400
        assert "larger than" in response.json()["errors"]["file"][0]
        assert Quote.objects.count() == 0

    def test_nul_bytes_are_refused(self, api, aws):
        response = post(api, text_file(f"{AWS_HEADER}\n\x00\n"), provider=aws.pk)
        assert response.status_code == 400
        assert "NUL" in response.json()["detail"]

    def test_a_bad_row_saves_nothing_and_names_every_row(self, api, aws):
        text = (DATA / "skypilot_aws_vms.csv").read_text() + "\n".join([
            "p5.48xlarge,H100,8.0,192,2048,,fifty,,us-east-1,use1-az2",
            "p5.48xlarge,H100,8.0,192,2048,,55.04,,,use1-az2",
        ])  # fmt: skip
        response = post(api, text_file(text), provider=aws.pk)
        assert response.status_code == 400
        body = response.json()
        assert [(e["row"], e["field"]) for e in body["errors"]] == [(17, "Price"), (18, "Region")]
        assert body["detail"].startswith("row 17: Price: not a number: 'fifty'")
        assert "nothing was saved" in body["detail"]
        assert Quote.objects.count() == 0

    def test_a_bad_re_import_leaves_the_old_prices(self, api, aws):
        post(api, fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        before = prices()
        text = (DATA / "skypilot_aws_vms.csv").read_text().replace(",55.04,", ",40.00,")
        text += "p5.48xlarge,H100,8.0,192,2048,,-3,,us-east-1,use1-az2\n"
        with mock.patch(RECOMPUTE) as recompute:
            assert post(api, text_file(text), provider=aws.pk).status_code == 400
        assert prices() == before
        recompute.assert_not_called()

    def test_a_missing_column_is_named(self, api, aws):
        response = post(api, text_file("InstanceType,Price\np5.48xlarge,55\n"), provider=aws.pk)
        assert response.status_code == 400
        fields = [e["field"] for e in response.json()["errors"]]
        assert fields == ["AcceleratorName", "AcceleratorCount", "Region"]

    def test_a_file_of_no_catalog_gpu_is_refused_with_its_names(self, api, aws):
        text = f"{AWS_HEADER}\np2.xlarge,K80,1,4,61,,0.9,,us-east-1,use1-az1\n"
        response = post(api, text_file(text), provider=aws.pk)
        assert response.status_code == 400
        assert "K80" in response.json()["detail"]

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"provider": "Nobody", "format": "skypilot"}, "provider"),
            ({"provider": "999999", "format": "skypilot"}, "provider"),
            ({"format": "skypilot"}, "provider"),
            ({"provider": "{aws}", "format": "SkyPilot"}, "format"),
            ({"provider": "{aws}", "format": "infracost"}, "format"),
            ({"provider": "{aws}", "format": "skypilot", "fetched_date": "28/11/2026"},
             "fetched_date"),
        ],
    )  # fmt: skip
    def test_bad_fields_are_field_level_400s(self, api, aws, body, field):
        body = {k: v.format(aws=aws.pk) for k, v in body.items()}
        response = api.post(
            URL, {"file": fixture_file("skypilot_aws_vms.csv"), **body}, format="multipart"
        )
        assert response.status_code == 400
        assert field in response.json()["errors"]
        assert Quote.objects.count() == 0

    def test_no_file(self, api, aws):
        response = api.post(URL, {"provider": aws.pk, "format": "skypilot"}, format="multipart")
        assert response.status_code == 400
        assert "file" in response.json()["errors"]

    def test_not_utf8(self, api, aws):
        response = post(api, SimpleUploadedFile("vms.csv", b"\xff\xfe\x00bad"), provider=aws.pk)
        assert response.status_code == 400
        assert response.json()["errors"]["file"] == ["not UTF-8 text"]


class TestAccess:
    @pytest.mark.parametrize("role", [Role.PLATFORM, Role.FINANCE, Role.API_CLIENT])
    def test_only_procurement_imports(self, catalog, token_client, aws, role):
        response = post(token_client(role), fixture_file("skypilot_aws_vms.csv"), provider=aws.pk)
        assert response.status_code == 403
        assert Quote.objects.count() == 0

    def test_anonymous_is_refused(self, catalog, aws, client):
        response = client.post(URL, {"provider": aws.pk, "format": "skypilot"})
        assert response.status_code in (401, 403)


class TestPage:
    def test_the_form_and_the_name_table(self, catalog, client, make_user):
        client.force_login(make_user(Role.PROCUREMENT))
        page = client.get(PAGE).content.decode()
        assert 'id="catalog-import-form"' in page
        assert "SkyPilot catalog (vms.csv)" in page and "gpuhunt catalog (CSV)" in page
        assert (
            "NVIDIA H100 SXM5 (h100-sxm5-80gb); NVIDIA H100 PCIe (h100-pcie-80gb); "
            "NVIDIA H100 NVL (h100-nvl-94gb)"
        ) in page

    def test_an_import_shows_what_was_added_and_what_was_not(self, catalog, client, make_user, aws):
        client.force_login(make_user(Role.PROCUREMENT))
        response = client.post(
            PAGE,
            {"file": fixture_file("skypilot_aws_vms.csv"), "provider": aws.pk,
             "format": "skypilot", "fetched_date": "2026-11-28"},
        )  # fmt: skip
        assert response.status_code == 200
        page = response.content.decode()
        assert "17 quotes added" in page and "1 rows skipped" in page
        assert "6.8800 USD an hour" in page and "Spot / preemptible" in page
        assert "NVIDIA H100 SXM5" in page and "<td>p5.4xlarge</td>" in page
        assert 'id="import-skipped"' in page and "a fractional GPU" in page
        assert Quote.objects.count() == 17

    def test_a_bad_file_lists_its_rows_and_saves_nothing(self, catalog, client, make_user, aws):
        client.force_login(make_user(Role.PROCUREMENT))
        text = f"{AWS_HEADER}\np5.48xlarge,H100,8,192,2048,,oops,,us-east-1,use1-az2\n"
        response = client.post(
            PAGE, {"file": text_file(text), "provider": aws.pk, "format": "skypilot"}
        )
        page = response.content.decode()
        assert "Nothing was saved." in page and "Row 2, Price: not a number" in page
        assert Quote.objects.count() == 0

    def test_other_roles_are_refused(self, catalog, client, make_user):
        client.force_login(make_user(Role.PLATFORM))
        assert client.get(PAGE).status_code == 403

    def test_the_quote_list_links_it(self, catalog, client, make_user):
        client.force_login(make_user(Role.PROCUREMENT))
        assert PAGE in client.get("/quotes/").content.decode()
