"""DPoP proofs signed on many threads at once with one client's key (each signature copies the key's prepared
signing context, read by every thread), and a client closed while other threads sign: every proof verifies (with the
``cryptography`` package, not the library), no two share a ``jti``, and a call that loses the race to the close is
refused cleanly (attack round Z on the speed change of issue 32)."""
from __future__ import annotations

import pathlib
import threading
from typing import List, Set, Tuple

import nativeauth as na
from emulator_protocol import Emulator
from test_dpop import Provider, jwt_parts, verify_proof

THREADS = 8


def test_proofs_and_api_calls_on_many_threads_share_one_key(emulator: Emulator) -> None:
    p = Provider(emulator)
    emulator.control("POST", "settings", {"api_dpop_nonce": "required"})
    with p.client() as client:
        p.sign_in(client)
        token = client.get_access_token([p.todo])
        proofs: List[Tuple[str, str]] = []
        statuses: List[int] = []
        errors: List[BaseException] = []
        lock = threading.Lock()
        start = threading.Barrier(THREADS)

        def work(t: int) -> None:
            try:
                start.wait(timeout=30)
                for i in range(24):
                    url = f"{p.todo_url}/{t}?i={i}"
                    proof = client.dpop_proof("POST", url, token.access_token)
                    with lock:
                        proofs.append((url, proof))
                    if i % 8 == 0:
                        status = client.call_api(p.todo_url, [p.todo]).status
                        with lock:
                            statuses.append(status)
            except BaseException as e:  # noqa: B902 — reported below
                with lock:
                    errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        assert not errors, errors
        assert len(proofs) == THREADS * 24 and statuses == [200] * (THREADS * 3)
        jkts: Set[str] = set()
        for url, proof in proofs:
            jkts.add(verify_proof(proof, "POST", url, token.access_token))  # htu: the URL without its query
        assert len(jkts) == 1, "one key"
        assert len({jwt_parts(x)[1]["jti"] for _, x in proofs}) == len(proofs), "a new jti each"
        outcomes = set(p.outcomes("resource"))
        assert outcomes <= {"use_dpop_nonce", "accepted"}, outcomes


def test_a_client_closed_while_other_threads_sign(emulator: Emulator) -> None:
    p = Provider(emulator)
    client = p.client()
    p.sign_in(client)
    proofs: List[str] = []
    unexpected: List[BaseException] = []
    lock = threading.Lock()
    signing = threading.Barrier(THREADS + 1)

    def work() -> None:
        first = True
        try:
            while True:
                proof = client.dpop_proof("GET", p.todo_url)
                with lock:
                    proofs.append(proof)
                if first:
                    first = False
                    signing.wait(timeout=30)
        except na.ClientClosedError:
            return
        except BaseException as e:  # noqa: B902 — reported below
            with lock:
                unexpected.append(e)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for th in threads:
        th.start()
    signing.wait(timeout=30)  # every thread has signed at least once and is signing on
    client.close()
    for th in threads:
        th.join(timeout=60)
    assert not any(th.is_alive() for th in threads)
    assert not unexpected, unexpected
    assert len(proofs) >= THREADS
    jkts = {verify_proof(x, "GET", p.todo_url, None) for x in proofs}
    assert len(jkts) == 1


def test_a_key_restored_from_the_cache_file_signs_on_many_threads(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    p = Provider(emulator)
    cache = tmp_path / "cache.json"
    with p.client(cache_path=cache) as first:
        p.sign_in(first)
        jkt = verify_proof(first.dpop_proof("GET", p.todo_url), "GET", p.todo_url, None)
    with p.client(cache_path=cache) as restored:
        proofs: List[str] = []
        lock = threading.Lock()
        start = threading.Barrier(THREADS)

        def work() -> None:
            start.wait(timeout=30)
            for _ in range(16):
                proof = restored.dpop_proof("GET", p.todo_url)
                with lock:
                    proofs.append(proof)

        threads = [threading.Thread(target=work) for _ in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        assert len(proofs) == THREADS * 16
        assert {verify_proof(x, "GET", p.todo_url, None) for x in proofs} == {jkt}, "the cached key, on every thread"
