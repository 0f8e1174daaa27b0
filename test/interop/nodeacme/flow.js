// SPDX-License-Identifier: Apache-2.0

// weir's interop flow for acme-client, the Node.js ACME client, at the
// version package-lock.json pins. Run by test/interop/nodeacme-flow.sh:
//
//   node flow.js DIRECTORY HTTP01_ADDR TXT_DIR OUT_DIR
//
// Node trusts weir's root through NODE_EXTRA_CA_CERTS. The flow:
//   - an ES256 account (createAccount);
//   - client.auto() for two names by http-01, answered on HTTP01_ADDR;
//   - client.auto() for a wildcard and its base name by dns-01, the TXT
//     records written into the test DNS server's directory (TXT_DIR);
//   - revocation of the first certificate with the account key, reason 4
//     (superseded);
//   - account key rollover to an RSA 2048 key (updateAccountKey): the old
//     key no longer finds the account, the new one orders a certificate
//     step by step (createOrder, getAuthorizations, completeChallenge,
//     waitForValidStatus, finalizeOrder, getCertificate);
//   - deactivation (updateAccount status deactivated), after which a new
//     order is refused as unauthorized.
// It writes the chains to OUT_DIR (http01.pem, dns01.pem, rollover.pem)
// for the shell's openssl checks, and exits non-zero at the first step
// whose result is not what it should be.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const acme = require('acme-client');

const [directoryUrl, http01Addr, txtDir, outDir] = process.argv.slice(2);
if (!directoryUrl || !http01Addr || !txtDir || !outDir) {
    console.error('usage: node flow.js DIRECTORY HTTP01_ADDR TXT_DIR OUT_DIR');
    process.exit(2);
}

function step(msg) {
    console.log(`acme-client: ${msg}`);
}

function fail(msg) {
    throw new Error(msg);
}

// The http-01 responder: key authorizations by token.
const tokens = new Map();
const server = http.createServer((req, res) => {
    const prefix = '/.well-known/acme-challenge/';
    const keyAuth = req.url.startsWith(prefix) ? tokens.get(req.url.slice(prefix.length)) : undefined;
    if (keyAuth === undefined) {
        res.writeHead(404).end();
        return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(keyAuth);
});

// TXT records for the test DNS server: one file per name, one value per
// line, replaced by a rename.
function txtFile(name) {
    return path.join(txtDir, name.toLowerCase().replace(/\.$/, ''));
}

function addTXT(name, value) {
    const file = txtFile(name);
    let old = '';
    try {
        old = fs.readFileSync(file, 'utf8');
    }
    catch (e) {
        if (e.code !== 'ENOENT') throw e;
    }
    const tmp = path.join(txtDir, `.tmp.node.${process.pid}`);
    fs.writeFileSync(tmp, `${old}${value}\n`);
    fs.renameSync(tmp, file);
}

function removeTXT(name, value) {
    const file = txtFile(name);
    const kept = fs.readFileSync(file, 'utf8').split('\n').filter((v) => v !== '' && v !== value);
    const tmp = path.join(txtDir, `.tmp.node.${process.pid}`);
    fs.writeFileSync(tmp, kept.map((v) => `${v}\n`).join(''));
    fs.renameSync(tmp, file);
}

async function challengeCreateFn(authz, challenge, keyAuthorization) {
    if (challenge.type === 'http-01') {
        tokens.set(challenge.token, keyAuthorization);
    }
    else if (challenge.type === 'dns-01') {
        addTXT(`_acme-challenge.${authz.identifier.value}`, keyAuthorization);
    }
    else {
        fail(`unexpected challenge type ${challenge.type}`);
    }
}

async function challengeRemoveFn(authz, challenge, keyAuthorization) {
    if (challenge.type === 'http-01') {
        tokens.delete(challenge.token);
    }
    else {
        removeTXT(`_acme-challenge.${authz.identifier.value}`, keyAuthorization);
    }
}

// checkChain checks that pem holds the leaf and the intermediate, and that
// the leaf names exactly names.
function checkChain(what, pem, names) {
    const certs = acme.crypto.splitPemChain(pem);
    if (certs.length !== 2) fail(`${what}: ${certs.length} certificates in the chain, want 2`);
    const info = acme.crypto.readCertificateInfo(certs[0]);
    const got = [...info.domains.altNames].sort();
    const want = [...names].sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) fail(`${what}: names ${got}, want ${want}`);
    return certs;
}

async function auto(client, names, type, file) {
    const [, csr] = await acme.crypto.createCsr({ altNames: names });
    const pem = await client.auto({
        csr,
        termsOfServiceAgreed: true,
        challengePriority: [type],
        // The names resolve only through weir's test DNS server, so the
        // client's own pre-check of the challenge cannot run here.
        skipChallengeVerification: true,
        challengeCreateFn,
        challengeRemoveFn,
    });
    checkChain(file, pem, names);
    fs.writeFileSync(path.join(outDir, file), pem);
    step(`auto() issued ${file} for ${names.join(', ')} by ${type}`);
    return pem;
}

// refusal returns the message of the error promise rejects with.
// acme-client's errors carry the problem's detail, not its type.
async function refusal(what, promise) {
    try {
        await promise;
    }
    catch (e) {
        return e.message;
    }
    return fail(`${what} succeeded; it should have been refused`);
}

async function main() {
    const [host, port] = http01Addr.split(':');
    await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(Number(port), host, resolve);
    });

    const oldKey = await acme.crypto.createPrivateEcdsaKey('P-256');
    const client = new acme.Client({ directoryUrl, accountKey: oldKey });
    await client.createAccount({ termsOfServiceAgreed: true, contact: ['mailto:node@weir.test'] });
    const accountUrl = client.getAccountUrl();
    step(`account ${accountUrl}`);

    const first = await auto(client, ['na1.weir.test', 'na2.weir.test'], 'http-01', 'http01.pem');
    await auto(client, ['*.nw.weir.test', 'nw.weir.test'], 'dns-01', 'dns01.pem');

    await client.revokeCertificate(first, { reason: 4 });
    step('revoked http01.pem (reason 4, superseded)');

    const newKey = await acme.crypto.createPrivateRsaKey(2048);
    await client.updateAccountKey(newKey);
    step('rolled the account key over to RSA 2048');
    const stale = new acme.Client({ directoryUrl, accountKey: oldKey });
    const staleErr = await refusal('finding the account with the old key',
        stale.createAccount({ onlyReturnExisting: true }));
    if (!/no account exists/.test(staleErr)) {
        fail(`the old key: "${staleErr}", want weir's accountDoesNotExist detail`);
    }
    const found = new acme.Client({ directoryUrl, accountKey: newKey });
    await found.createAccount({ onlyReturnExisting: true });
    if (found.getAccountUrl() !== accountUrl) fail(`the new key finds ${found.getAccountUrl()}, want ${accountUrl}`);
    step(`the old key finds no account ("${staleErr}"); the new key finds the same account`);

    // An order step by step, signed with the new key.
    const names = ['na3.weir.test'];
    const order = await found.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) });
    for (const authz of await found.getAuthorizations(order)) {
        const challenge = authz.challenges.find((c) => c.type === 'http-01');
        if (!challenge) fail(`authorization for ${authz.identifier.value} offers no http-01`);
        tokens.set(challenge.token, await found.getChallengeKeyAuthorization(challenge));
        await found.completeChallenge(challenge);
        await found.waitForValidStatus(challenge);
    }
    const [, csr] = await acme.crypto.createCsr({ altNames: names }, await acme.crypto.createPrivateEcdsaKey('P-384'));
    const finalized = await found.finalizeOrder(order, csr);
    const pem = await found.getCertificate(finalized);
    checkChain('rollover.pem', pem, names);
    fs.writeFileSync(path.join(outDir, 'rollover.pem'), pem);
    step('issued rollover.pem step by step with the new key');

    await found.updateAccount({ status: 'deactivated' });
    const deactErr = await refusal('an order after deactivation',
        found.createOrder({ identifiers: [{ type: 'dns', value: 'na4.weir.test' }] }));
    if (!/deactivated/.test(deactErr)) {
        fail(`an order after deactivation: "${deactErr}", want weir's unauthorized detail for a deactivated account`);
    }
    step(`deactivated the account; a new order is refused: ${deactErr}`);
}

main().then(
    () => server.close(),
    (e) => {
        console.error(`acme-client flow failed: ${e.stack || e}`);
        process.exit(1);
    },
);
