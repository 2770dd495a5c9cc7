#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""One ADS exchange with xdsd over TLS, for the systemd test.

    tls-ads.py HOST:PORT CA.pem SERVER_NAME

Connects with gRPC's Python bindings, checking xdsd's certificate
against CA.pem for SERVER_NAME, asks for every cluster and prints the
name of each cluster of the first response, one a line. The messages
are written and read by hand (the few fields used), so that no
generated code is needed. Exit status 0 when a response came, 1
otherwise (gRPC's status on stderr).
"""
import sys

import grpc

CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"


def field(number, payload):
    """A length-delimited protobuf field."""
    key = number << 3 | 2
    n = len(payload)
    size = b""
    while True:
        b = n & 0x7F
        n >>= 7
        size += bytes([b | (0x80 if n else 0)])
        if not n:
            break
    return bytes([key]) + size + payload


def fields(data):
    """(number, bytes) of each length-delimited field; others skipped."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(data, i)
        elif wire == 2:
            n, i = varint(data, i)
            yield number, data[i:i + n]
            i += n
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            raise ValueError("wire type %d" % wire)


def varint(data, i):
    v = shift = 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def main():
    target, ca, name = sys.argv[1:4]
    with open(ca, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    channel = grpc.secure_channel(
        target, creds, options=[("grpc.ssl_target_name_override", name)])
    ads = channel.stream_stream(
        "/envoy.service.discovery.v3.AggregatedDiscoveryService/"
        "StreamAggregatedResources",
        request_serializer=lambda b: b, response_deserializer=lambda b: b)
    node = field(1, b"systemd-test") + field(2, b"systemd-test")
    request = field(2, node) + field(4, CDS.encode())
    try:
        for response in ads(iter([request]), timeout=30):
            for number, any_ in fields(response):
                if number != 2:  # resources
                    continue
                value = dict(fields(any_)).get(2, b"")
                print(dict(fields(value)).get(1, b"").decode())
            return 0
    except grpc.RpcError as e:
        print("tls-ads: %s: %s" % (e.code().name, e.details()), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
